"""models/capsnet.tn (entry `capsnet`) against a plain-PyTorch CapsNet with the
same weights, on real MNIST digits from the bundled sample: lengths,
reconstructions and loss, then the gradient of the loss for every parameter.

The PyTorch model is written the way a PyTorch user would write it (nn.Conv2d,
nn.Linear, a (1152, 10, 16, 8) transform, reshapes and permutes); its weights
are transferred into Tenet's layouts by reshaping, never by recomputation."""

import pytest

import tenet
from conftest import mnist_batch, model_source

torch = pytest.importorskip("torch")
F = torch.nn.functional

BATCH = 8
# float32 sums in different orders (a 20736-term convolution, GEMM blocking):
# errors relative to the largest magnitude of each tensor.
FORWARD_TOLERANCE = 1e-5
GRADIENT_TOLERANCE = 2e-5


def squash(s, dim=-1):
    n2 = (s * s).sum(dim, keepdim=True)
    return s * torch.sqrt(n2 + 1e-7) / (1 + n2)


class CapsNet(torch.nn.Module):
    """Sabour et al. (2017): conv1 9x9 256 ReLU; PrimaryCaps 9x9 stride 2, 32 maps of
    6x6 8-D capsules (channel 8 t + d); DigitCaps 10 x 16-D with 3 routing iterations;
    margin loss; decoder 160 -> 512 -> 1024 -> 784 masked by the label."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 256, 9)
        self.primary = torch.nn.Conv2d(256, 256, 9, stride=2)
        self.W = torch.nn.Parameter(0.05 * torch.randn(32 * 6 * 6, 10, 16, 8))
        self.dec1 = torch.nn.Linear(160, 512)
        self.dec2 = torch.nn.Linear(512, 1024)
        self.dec3 = torch.nn.Linear(1024, 784)

    def forward(self, image, label):
        batch = image.shape[0]
        conv1 = F.relu(self.conv1(image))
        primary = self.primary(conv1).view(batch, 32, 8, 6, 6)
        u = squash(primary.permute(0, 1, 3, 4, 2).reshape(batch, 1152, 8))
        u_hat = torch.einsum("iked,bid->bike", self.W, u)  # (B, 1152, 10, 16)
        logits = torch.zeros(batch, 1152, 10)
        for _ in range(3):
            # softmax over the 10 digit capsules, for each input capsule of each example
            c = F.softmax(logits, dim=2)
            v = squash((c.unsqueeze(-1) * u_hat).sum(1))  # (B, 10, 16)
            logits = logits + (u_hat * v.unsqueeze(1)).sum(-1)
        lengths = torch.sqrt((v * v).sum(-1) + 1e-7)
        target = F.one_hot(label, 10).to(v.dtype)
        margin = (target * F.relu(0.9 - lengths) ** 2
                  + 0.5 * (1 - target) * F.relu(lengths - 0.1) ** 2).sum(1).mean()
        masked = (v * target.unsqueeze(-1)).reshape(batch, 160)
        hidden = F.relu(self.dec2(F.relu(self.dec1(masked))))
        reconstruction = torch.sigmoid(self.dec3(hidden)).view(batch, 28, 28)
        recon_loss = 0.0005 * ((reconstruction - image[:, 0]) ** 2).sum((1, 2)).mean()
        return lengths, reconstruction, margin + recon_loss

    def tenet_parameters(self, grads=False):
        """The same weights (or their gradients) in capsnet.tn's layouts, in its input
        order (after image and label)."""
        t = (lambda p: p.grad) if grads else (lambda p: p)
        return {
            "conv1_w": t(self.conv1.weight), "conv1_b": t(self.conv1.bias),
            "primary_w": t(self.primary.weight), "primary_b": t(self.primary.bias),
            "W": t(self.W).view(32, 6, 6, 10, 16, 8),
            "dec1_w": t(self.dec1.weight).view(512, 10, 16), "dec1_b": t(self.dec1.bias),
            "dec2_w": t(self.dec2.weight), "dec2_b": t(self.dec2.bias),
            "dec3_w": t(self.dec3.weight).view(28, 28, 1024),
            "dec3_b": t(self.dec3.bias).view(28, 28),
        }


def max_error(got, want):
    """max |got - want| and the same relative to max |want|."""
    abs_err = float((got - want).abs().max())
    return abs_err, abs_err / max(float(want.abs().max()), 1e-30)


@pytest.fixture(scope="module")
def capsnet_op():
    op = tenet.torch_op(model_source("capsnet.tn"), "capsnet")
    assert op.function.input_names[:2] == ["image", "label"]
    return op


def test_capsnet_matches_pytorch_on_mnist(capsnet_op):
    torch.manual_seed(0)
    model = CapsNet()
    images, labels = mnist_batch(BATCH)
    image, label = torch.from_numpy(images), torch.from_numpy(labels)

    want = model(image, label)
    want[2].backward()

    params = {name: p.detach().clone().requires_grad_()
              for name, p in model.tenet_parameters().items()}
    assert list(params) == capsnet_op.function.input_names[2:]
    got = capsnet_op(image, label.to(torch.int32), *params.values())
    got[2].backward()

    print(f"\nCapsNet, batch of {BATCH} MNIST digits (labels {labels.tolist()}), float32:")
    for name, g, w in zip(["lengths", "reconstruction", "loss"], got, want):
        abs_err, rel_err = max_error(g.detach(), w.detach())
        print(f"  {name:<15} max abs error {abs_err:.2e}  relative to max {rel_err:.2e}")
        assert g.shape == w.shape
        assert rel_err <= FORWARD_TOLERANCE, name
    assert 0.05 < want[2].item() < 2  # a plausible untrained loss, not a degenerate one

    reference_grads = model.tenet_parameters(grads=True)
    for name, p in params.items():
        abs_err, rel_err = max_error(p.grad, reference_grads[name])
        print(f"  d_{name:<13} max abs error {abs_err:.2e}  relative to max {rel_err:.2e}  "
              f"(max |grad| {float(reference_grads[name].abs().max()):.2e})")
        assert rel_err <= GRADIENT_TOLERANCE, name
