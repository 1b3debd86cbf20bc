"""examples/train_cuda.py's training written for the CPU by hand: its model (imported from the
fixed copy, `train.py`, whose classes the fixes leave alone), its data and its loop, one epoch."""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from train import Net


def main():
    torch.manual_seed(0)
    images = torch.randn(512, 3, 32, 32)
    labels = torch.randint(0, 10, (512,))
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    running = torch.zeros((), dtype=torch.float64)
    for x, y in DataLoader(TensorDataset(images, labels), batch_size=64):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.detach().double()
    print(f"loss {running.item():.6f}")


if __name__ == "__main__":
    main()
