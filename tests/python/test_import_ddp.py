"""Program.module() under DistributedDataParallel: two processes (gloo, localhost), each
with half of a batch, get the gradients one process gets on the whole batch."""

import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import tenet


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(5, 7)
        self.fc2 = torch.nn.Linear(7, 3)

    def forward(self, x, label):
        return torch.nn.functional.cross_entropy(self.fc2(torch.tanh(self.fc1(x))), label)


def _data():
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(8, 5, generator=generator, dtype=torch.float64),
            torch.randint(0, 3, (8,), generator=generator))


def _model():
    torch.manual_seed(0)
    return Net().double()


def _worker(rank, port, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        x, label = _data()
        mine = slice(4 * rank, 4 * rank + 4)
        module = tenet.from_torch(_model(), (x[mine], label[mine])).module()
        ddp = torch.nn.parallel.DistributedDataParallel(module)
        ddp(x[mine], label[mine]).backward()
        results[rank] = {k: p.grad.clone() for k, p in module.named_parameters()}
    finally:
        dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_gradients_equal_one_process_on_the_whole_batch():
    x, label = _data()
    model = _model()
    model(x, label).backward()  # the mean over 8 = the mean of the two means over 4
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(_worker, args=(_free_port(), results), nprocs=2, join=True)
        results = dict(results)
    for rank in (0, 1):
        for key, p in model.named_parameters():
            assert torch.allclose(results[rank][key], p.grad, rtol=1e-12, atol=1e-14), (rank, key)
