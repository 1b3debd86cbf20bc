"""Train a ResNet-style classifier on CUDA with mixed precision and DDP.

A typical GPU training script: nothing in it knows about Ascend NPUs yet.
Run: torchrun --nproc_per_node=8 train_cuda.py --epochs 90
"""

import argparse
import logging
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger(__name__)

os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


class Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class Net(nn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 3, padding=1)
        self.blocks = nn.Sequential(Block(64), Block(64))
        self.head = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(F.relu(self.stem(x)))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def setup(args: argparse.Namespace) -> torch.device:
    if "LOCAL_RANK" in os.environ:
        dist.init_process_group(backend="nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        return torch.device(f"cuda:{local_rank}")
    # Single process: use every GPU in this machine.
    logger.info("no LOCAL_RANK, running on cuda without DDP")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_model(device: torch.device, distributed: bool) -> nn.Module:
    model = Net().cuda()
    if distributed:
        return DDP(model, device_ids=[device.index])
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    return model


def train(args: argparse.Namespace) -> None:
    device = setup(args)
    distributed = dist.is_initialized()
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

    images = torch.randn(512, 3, 32, 32)
    labels = torch.randint(0, 10, (512,))
    dataset = TensorDataset(images, labels)
    sampler = DistributedSampler(dataset) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, pin_memory=True)

    model = build_model(device, distributed)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, fused=True)
    scaler = GradScaler()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        start.record()
        running = torch.zeros((), dtype=torch.float64, device=device)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.to("cuda:0", non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with autocast(dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            running += loss.detach().double()
        end.record()
        torch.cuda.synchronize()
        if not distributed or dist.get_rank() == 0:
            mem = torch.cuda.max_memory_allocated() / 2**20
            logger.info("epoch %d loss %.4f %.1f ms %.0f MiB (cuda)", epoch, running.item(),
                        start.elapsed_time(end), mem)
    if distributed and dist.get_backend() == "nccl":
        dist.barrier()
        dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description="Train on CUDA with AMP and DDP")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    t0 = time.time()
    train(args)
    print(f"done in {time.time() - t0:.1f}s on cuda")


if __name__ == "__main__":
    main()
