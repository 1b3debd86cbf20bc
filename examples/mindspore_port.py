"""A first MindSpore port of train_cuda.py's network, written by copying the PyTorch code.

It runs, and it is wrong in the ways such ports usually are:
`lsp-check --target mindspore examples/mindspore_port.py` lists each of them.
"""

import mindspore
from mindspore import Parameter, nn, ops


class Block(nn.Cell):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels, momentum=0.1)
        self.conv2 = nn.Conv2d(channels, channels, 3, pad_mode="pad", padding=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.drop = nn.Dropout(0.1)
        self.running_energy = Parameter(ops.zeros(channels))

    def construct(self, x):
        out = ops.relu(self.bn1(self.conv1(x)))
        out = self.drop(self.bn2(self.conv2(out)))
        return ops.relu(out + x)


class Net(nn.Cell):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 3, pad_mode="pad", padding=1, has_bias=True)
        self.blocks = nn.SequentialCell([Block(64), Block(64)])
        self.head = nn.Dense(in_features=64, out_features=num_classes)

    def construct(self, x):
        x = self.blocks(ops.relu(self.stem(x)))
        return self.head(ops.mean(x, (2, 3)))


def top_classes(logits, k: int = 5):
    values, indices = ops.TopK()(logits, k)
    return indices


def train(steps: int = 10) -> None:
    net = Net()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = mindspore.value_and_grad(forward, None, optimizer.parameters)
    for _ in range(steps):
        x = ops.randn(8, 3, 32, 32)
        y = ops.randint(0, 10, (8,))
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        print(f"loss {float(loss.asnumpy()):.4f}")


if __name__ == "__main__":
    train()
