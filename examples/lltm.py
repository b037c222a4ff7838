"""Train an LLTM recurrent cell written in Tenet inside an ordinary PyTorch loop.

The cell is models/zoo/lltm.tn, the LLTM of PyTorch's C++ extension tutorial.
tenet.torch_op makes it a PyTorch operator whose backward Tenet derives, so
unlike the tutorial there is no hand-written backward anywhere: autograd calls
the vector-Jacobian program that Tenet generated.

The task: read a sequence of random vectors and predict the running mean of
their first feature from the final hidden state (a memory task an untrained
cell cannot do). Prints the loss as it falls.

    python examples/lltm.py [--steps 60]
"""

import argparse
import math
import pathlib
import time

import torch

import tenet

LLTM_SOURCE = pathlib.Path(__file__).resolve().parents[1] / "models" / "zoo" / "lltm.tn"


class TenetLLTM(torch.nn.Module):
    """An LLTM cell: parameters in PyTorch, the cell's math (and its gradient) in Tenet."""

    def __init__(self, input_features, state_size):
        super().__init__()
        # gates = W [h, x] + bias: input, output and candidate gates stacked (3 S rows)
        self.weights = torch.nn.Parameter(torch.empty(3 * state_size, state_size + input_features))
        self.bias = torch.nn.Parameter(torch.empty(3 * state_size))
        bound = 1.0 / math.sqrt(state_size)  # the tutorial's initialisation
        torch.nn.init.uniform_(self.weights, -bound, bound)
        torch.nn.init.uniform_(self.bias, -bound, bound)
        self.cell = tenet.torch_op(LLTM_SOURCE.read_text(), "lltm")

    def forward(self, x, state):
        h, c = state
        return self.cell(x, h, c, self.weights, self.bias)


class SequenceRegressor(torch.nn.Module):
    def __init__(self, input_features, state_size):
        super().__init__()
        self.state_size = state_size
        self.lltm = TenetLLTM(input_features, state_size)
        self.readout = torch.nn.Linear(state_size, 1)

    def forward(self, sequence):  # (T, B, I)
        batch = sequence.shape[1]
        state = (torch.zeros(batch, self.state_size), torch.zeros(batch, self.state_size))
        for x in sequence:
            state = self.lltm(x, state)
        return self.readout(state[0]).squeeze(1)


def batch_of_sequences(length, batch, features):
    sequence = torch.randn(length, batch, features)
    return sequence, sequence[:, :, 0].mean(0)


def main(steps=60, length=8, batch=16, features=32, state_size=128, seed=0, log_every=10):
    """Trains for `steps` steps; returns the losses (one per step)."""
    torch.manual_seed(seed)
    model = SequenceRegressor(features, state_size)
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    start = time.perf_counter()
    for step in range(steps):
        sequence, target = batch_of_sequences(length, batch, features)
        loss = torch.nn.functional.mse_loss(model(sequence), target)
        optimiser.zero_grad()
        loss.backward()  # through Tenet's derived LLTM backward, 8 times per step
        optimiser.step()
        losses.append(loss.item())
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step:3d}  loss {loss.item():.4f}  "
                  f"({time.perf_counter() - start:.1f} s)")
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    main(steps=parser.parse_args().steps)
