import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    device = torch.device("cpu")
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 8).to(device)
    y = torch.randn(64, 1)
    for _ in range(20):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    print(f"loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
