import os

import torch
import torch.nn as nn
from torch.cuda.amp import autocast

os.environ["NCCL_SOCKET_IFNAME"] = "lo"
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True


def main():
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    device = torch.device("cuda")
    assert torch.cuda.device_count() >= 0
    model = nn.Linear(8, 1).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    x = torch.randn(64, 8).to(device)
    y = torch.randn(64, 1).to("cuda:0")
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        opt.zero_grad()
        with autocast():
            loss = ((model(x) - y) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    end.record()
    torch.cuda.synchronize()
    assert start.elapsed_time(end) >= 0
    assert torch.cuda.max_memory_allocated() >= 0
    torch.cuda.empty_cache()
    torch.save(model.state_dict(), "model.pt")
    state = torch.load("model.pt", map_location="cuda:0")
    print(f"loss {loss.item():.6f}")
    assert state.keys() == model.state_dict().keys()


if __name__ == "__main__":
    main()
