"""The benchmark's workloads: for each, the Tenet program and request, the
PyTorch function, the inputs (fixed seeds; real MNIST digits from
data/mnist-sample when it is there) and the analytic flop count.

Flop counts (docs/benchmark.md): a contraction C = sum A * B of M
multiply-adds counts 2M flops forward and 2M more for the gradient of each
differentiated operand; element-wise work counts one flop per arithmetic
operation (exp, sqrt, tanh, division: one each) forward and twice that for its
backward. The CapsNet step counts contractions only (element-wise work is
below 0.1% of it).
"""
import gzip
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MNIST_SAMPLE = os.path.join(ROOT, "data", "mnist-sample")
CAPS = 32 * 6 * 6  # primary capsules

# The parameters of models/capsnet.tn, in its order (every float input but image).
PARAMETER_SHAPES = [
    ("conv1_w", (256, 1, 9, 9)),
    ("conv1_b", (256,)),
    ("primary_w", (256, 256, 9, 9)),
    ("primary_b", (256,)),
    ("W", (32, 6, 6, 10, 16, 8)),
    ("dec1_w", (512, 10, 16)),
    ("dec1_b", (512,)),
    ("dec2_w", (1024, 512)),
    ("dec2_b", (1024,)),
    ("dec3_w", (28, 28, 1024)),
    ("dec3_b", (28, 28)),
]

# The parameters of models/mnist_cnn.tn (PyTorch's MNIST example), in its order.
CNN_PARAMETER_SHAPES = [
    ("conv1_w", (32, 1, 3, 3)),
    ("conv1_b", (32,)),
    ("conv2_w", (64, 32, 3, 3)),
    ("conv2_b", (64,)),
    ("fc1_w", (128, 64, 12, 12)),
    ("fc1_b", (128,)),
    ("fc2_w", (10, 128)),
    ("fc2_b", (10,)),
]
CNN_FAN_IN = {"conv1": 9, "conv2": 288, "fc1": 9216, "fc2": 128}


@dataclass
class Workload:
    name: str  # identifier, also the data folder's name
    title: str  # for tables
    group: str  # "capsnet", "cnn", "op", "lltm"
    mode: str  # "train", "forward", "vjp" (forward + backward with cotangents)
    tn_file: str  # relative to the repository root
    tn_fn: str
    torch_fn: str  # a key of capsnet_torch.OPERATORS or of capsnet_torch.MODELS
    arg_names: List[str]  # the PyTorch function's arguments, in order
    outputs: List[Tuple[str, Tuple[int, ...]]]  # Tenet output names and shapes
    make_inputs: Callable[[np.random.Generator], Dict[str, np.ndarray]]
    wrt: List[str] = field(default_factory=list)
    flops: float = 0.0
    loss_output: Optional[str] = None  # train: the scalar differentiated
    # Imported workloads (issue 17): the PyTorch module of bench/models_torch.py
    # ("model:NAME" or "layer:NAME" in torch_fn) is translated by tenet.from_torch
    # in the driver's import step, which fills tn_file, tn_fn, wrt, loss_output and
    # flops in from DATA_DIR/import.json. `training`: the module's mode.
    imported: bool = False
    training: bool = False


# ---- inputs -----------------------------------------------------------------

def fan_in_uniform(rng, shape, fan_in):
    """PyTorch's default for conv/linear weights and biases: U(-1/sqrt(fan_in), ..)."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def uniform(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def digits(rng, batch):
    """The first `batch` MNIST training digits in [0, 1] and their labels, or
    (without the sample) uniform random images and labels."""
    images = os.path.join(MNIST_SAMPLE, "train-images-idx3-ubyte.gz")
    labels = os.path.join(MNIST_SAMPLE, "train-labels-idx1-ubyte.gz")
    if os.path.exists(images) and os.path.exists(labels):
        x = read_idx(images)[:batch].astype(np.float32) / 255.0
        y = read_idx(labels)[:batch].astype(np.int32)
        return x.reshape(batch, 1, 28, 28), y
    return uniform(rng, (batch, 1, 28, 28), 0.0, 1.0), rng.integers(0, 10, batch).astype(np.int32)


def capsnet_parameters(rng):
    fans = {"conv1": 81, "primary": 256 * 81, "dec1": 160, "dec2": 512, "dec3": 1024}
    out = {}
    for name, shape in PARAMETER_SHAPES:
        if name == "W":
            out[name] = (0.05 * rng.standard_normal(shape)).astype(np.float32)
        else:
            out[name] = fan_in_uniform(rng, shape, fans[name.split("_")[0]])
    return out


def dropout_mask(rng, shape, p):
    """Inverted dropout's mask: Bernoulli(1 - p) / (1 - p), as the trainer draws it."""
    return ((rng.uniform(size=shape) >= p) / (1.0 - p)).astype(np.float32)


def with_cotangents(make, outputs):
    """Adds a random cotangent d_<output> for every output (vjp workloads)."""
    def inputs(rng):
        arrays = make(rng)
        for name, shape in outputs:
            arrays["d_" + name] = uniform(rng, shape)
        return arrays
    return inputs


# ---- flop counts --------------------------------------------------------------

def capsnet_macs(batch):
    """Multiply-adds of capsnet.tn's contractions, forward, per named group."""
    return {
        "conv1": batch * 256 * 20 * 20 * 81,
        "primary": batch * 256 * 6 * 6 * 256 * 81,
        "u_hat": batch * CAPS * 10 * 16 * 8,
        # 3 weighted sums s, 2 agreements (the third is dead code)
        "routing": batch * CAPS * 10 * 16 * 5,
        "decoder": batch * (160 * 512 + 512 * 1024 + 1024 * 784),
    }


def capsnet_flops(batch, train):
    macs = capsnet_macs(batch)
    forward = 2 * sum(macs.values())
    if not train:
        return forward
    # Backward: conv1's weight gradient only (the image is not differentiated),
    # both operands' gradients everywhere else.
    return forward + 2 * macs["conv1"] + 2 * 2 * (sum(macs.values()) - macs["conv1"])


def op_flops(macs, operands, elementwise, backward):
    """2 flops per multiply-add per pass (forward, then one gradient per
    differentiated operand) plus element-wise work (x3 with the backward)."""
    if not backward:
        return 2 * macs + elementwise
    return 2 * macs * (1 + operands) + 3 * elementwise


# ---- the table ------------------------------------------------------------------

def capsnet_workloads():
    out = []
    for batch in (100, 32):
        for mode in ("train", "forward"):
            def make(rng, batch=batch):
                image, label = digits(rng, batch)
                arrays = {"image": image, "label": label}
                arrays.update(capsnet_parameters(rng))
                return arrays
            what = "training step" if mode == "train" else "inference"
            out.append(Workload(
                name="capsnet_%s_b%d" % ("train" if mode == "train" else "infer", batch),
                title="CapsNet %s, batch %d" % (what, batch), group="capsnet", mode=mode,
                tn_file="models/capsnet.tn", tn_fn="capsnet", torch_fn="capsnet",
                arg_names=["image", "label"],
                outputs=[("lengths", (batch, 10)), ("reconstruction", (batch, 28, 28)),
                         ("loss", ())],
                make_inputs=make, wrt=[n for n, _ in PARAMETER_SHAPES] if mode == "train" else [],
                flops=capsnet_flops(batch, mode == "train"),
                loss_output="loss" if mode == "train" else None))
    return out


def cnn_flops(batch, train=True):
    """The MNIST CNN's training step: conv1 (its weight gradient only: the
    image is not differentiated), conv2, fc1 and fc2 (both operands' gradients);
    inference: their forward."""
    conv1 = batch * 32 * 26 * 26 * 9
    rest = batch * (64 * 24 * 24 * 288 + 128 * 9216 + 10 * 128)
    if not train:
        return 2 * (conv1 + rest)
    return 2 * conv1 * 2 + 2 * rest * 3


def cnn_workloads(batch=64):
    """The PyTorch MNIST example's CNN (models/mnist_cnn.tn), its training
    step at the example's batch size, with fixed dropout masks, and its
    inference (masks of ones: dropout is the identity in evaluation mode)."""
    def make(rng, train=True):
        image, label = digits(rng, batch)
        arrays = {"image": image, "label": label,
                  "drop1": dropout_mask(rng, (batch, 64, 12, 12), 0.25),
                  "drop2": dropout_mask(rng, (batch, 128), 0.5)}
        if not train:
            arrays["drop1"] = np.ones_like(arrays["drop1"])
            arrays["drop2"] = np.ones_like(arrays["drop2"])
        for name, shape in CNN_PARAMETER_SHAPES:
            arrays[name] = fan_in_uniform(rng, shape, CNN_FAN_IN[name.split("_")[0]])
        return arrays
    common = dict(group="cnn", tn_file="models/mnist_cnn.tn", tn_fn="mnist_cnn",
                  torch_fn="mnist_cnn", arg_names=["image", "label", "drop1", "drop2"],
                  outputs=[("log_probs", (batch, 10)), ("loss", ())])
    return [
        Workload(name="mnist_cnn_train_b%d" % batch,
                 title="MNIST CNN training step, batch %d" % batch, mode="train",
                 make_inputs=make, wrt=[n for n, _ in CNN_PARAMETER_SHAPES],
                 flops=cnn_flops(batch), loss_output="loss", **common),
        Workload(name="mnist_cnn_infer_b%d" % batch,
                 title="MNIST CNN inference, batch %d" % batch, mode="forward",
                 make_inputs=lambda rng: make(rng, train=False),
                 flops=cnn_flops(batch, train=False), **common)]


def operator_specs(batch):
    """(name, title, .tn file, function, args, outputs, inputs, wrt, macs,
    differentiated contraction operands, element-wise flops)."""
    B = batch

    def conv1_inputs(rng):
        image, _ = digits(rng, B)
        return {"image": image, "w": fan_in_uniform(rng, (256, 1, 9, 9), 81),
                "bias": fan_in_uniform(rng, (256,), 81)}

    def primary_inputs(rng):
        return {"relu1": uniform(rng, (B, 256, 20, 20), 0.0, 1.0),
                "w": fan_in_uniform(rng, (256, 256, 9, 9), 256 * 81),
                "bias": fan_in_uniform(rng, (256,), 256 * 81)}

    def c_weights(rng):
        c = rng.uniform(0.0, 1.0, size=(B, 32, 6, 6, 10))
        return (c / c.sum(axis=-1, keepdims=True)).astype(np.float32)

    def decoder_inputs(rng):
        _, label = digits(rng, B)
        return {"v": uniform(rng, (B, 10, 16), -0.5, 0.5), "label": label,
                "w1": fan_in_uniform(rng, (512, 10, 16), 160),
                "b1": fan_in_uniform(rng, (512,), 160),
                "w2": fan_in_uniform(rng, (1024, 512), 512),
                "b2": fan_in_uniform(rng, (1024,), 512),
                "w3": fan_in_uniform(rng, (28, 28, 1024), 1024),
                "b3": fan_in_uniform(rng, (28, 28), 1024)}

    return [
        ("conv1_relu", "conv1 + ReLU", "bench/ops/conv1_relu.tn", "conv1_relu",
         ["image", "w", "bias"], [("relu", (B, 256, 20, 20))], conv1_inputs, ["w", "bias"],
         B * 256 * 400 * 81, 1, 2 * B * 256 * 400),
        ("primary_caps", "PrimaryCaps conv", "bench/ops/primary_caps.tn", "primary_caps",
         ["relu1", "w", "bias"], [("primary", (B, 32, 6, 6, 8))], primary_inputs,
         ["relu1", "w", "bias"], B * 256 * 36 * 256 * 81, 2, B * 256 * 36),
        ("squash", "squash", "models/squash.tn", "squash", ["s"], [("v", (B, CAPS, 8))],
         lambda rng: {"s": uniform(rng, (B, CAPS, 8))}, ["s"], B * CAPS * 8, 1,
         B * CAPS * (3 + 2 * 8)),
        ("u_calc", "u calc (capsule transform)", "models/capsule_transform.tn",
         "capsule_transform", ["u", "W"], [("uh", (B, 32, 6, 6, 10, 16))],
         lambda rng: {"u": uniform(rng, (B, 32, 6, 6, 8), -0.3, 0.3),
                      "W": (0.05 * rng.standard_normal((32, 6, 6, 10, 16, 8))).astype(np.float32)},
         ["u", "W"], B * CAPS * 10 * 16 * 8, 2, 0),
        ("s_calc", "s calc (weighted sum)", "bench/ops/s_calc.tn", "s_calc", ["c", "uh"],
         [("s", (B, 10, 16))],
         lambda rng: {"c": c_weights(rng), "uh": uniform(rng, (B, 32, 6, 6, 10, 16))},
         ["c", "uh"], B * CAPS * 10 * 16, 2, 0),
        ("b_calc", "b calc (agreement)", "bench/ops/b_calc.tn", "b_calc", ["uh", "v", "logit"],
         [("new_logit", (B, 32, 6, 6, 10))],
         lambda rng: {"uh": uniform(rng, (B, 32, 6, 6, 10, 16)),
                      "v": uniform(rng, (B, 10, 16), -0.3, 0.3),
                      "logit": uniform(rng, (B, 32, 6, 6, 10))},
         ["uh", "v", "logit"], B * CAPS * 10 * 16, 2, B * CAPS * 10),
        ("softmax", "routing softmax", "models/softmax.tn", "softmax", ["z"],
         [("p", (B * CAPS, 10))], lambda rng: {"z": uniform(rng, (B * CAPS, 10), -3.0, 3.0)},
         ["z"], 0, 0, B * CAPS * 50),
        ("masked_decoder", "decoder (masked, 3 layers)", "models/zoo/masked_decoder.tn",
         "masked_decoder", ["v", "label", "w1", "b1", "w2", "b2", "w3", "b3"],
         [("recon", (B, 28, 28))], decoder_inputs, ["v", "w1", "b1", "w2", "b2", "w3", "b3"],
         B * (160 * 512 + 512 * 1024 + 1024 * 784), 2, B * (160 + 2 * 1536 + 2 * 784)),
    ]


def operator_workloads(batch):
    out = []
    for (name, title, tn_file, tn_fn, args, outputs, make, wrt, macs, operands,
         elementwise) in operator_specs(batch):
        for mode in ("forward", "vjp"):
            out.append(Workload(
                name="op_%s_%s" % (name, "fwd" if mode == "forward" else "fwdbwd"),
                title="%s, %s" % (title, "forward" if mode == "forward" else "fwd+bwd"),
                group="op", mode=mode, tn_file=tn_file, tn_fn=tn_fn, torch_fn=name,
                arg_names=args, outputs=outputs,
                make_inputs=make if mode == "forward" else with_cotangents(make, outputs),
                wrt=wrt if mode == "vjp" else [],
                flops=op_flops(macs, operands, elementwise, mode == "vjp")))
    return out


def lltm_workloads(batch=16, features=32, state=128):
    """The tutorial's sizes: batch 16, 32 input features, state size 128."""
    outputs = [("new_h", (batch, state)), ("new_c", (batch, state))]

    def make(rng):
        bound = 1.0 / np.sqrt(state)  # the tutorial's reset_parameters
        return {"x": uniform(rng, (batch, features)), "h": uniform(rng, (batch, state)),
                "cell": uniform(rng, (batch, state)),
                "w": uniform(rng, (3 * state, features + state), -bound, bound),
                "bias": uniform(rng, (3 * state,), -bound, bound)}

    macs = batch * 3 * state * (features + state)
    elementwise = batch * (3 * state + 3 * state + 2 * state + 2 * state)
    out = []
    for mode in ("forward", "vjp"):
        out.append(Workload(
            name="lltm_%s" % ("fwd" if mode == "forward" else "fwdbwd"),
            title="LLTM cell (16 x 32, state 128), %s" % (
                "forward" if mode == "forward" else "fwd+bwd"),
            group="lltm", mode=mode, tn_file="models/zoo/lltm.tn", tn_fn="lltm", torch_fn="lltm",
            arg_names=["x", "h", "cell", "w", "bias"], outputs=outputs,
            make_inputs=make if mode == "forward" else with_cotangents(make, outputs),
            wrt=["x", "h", "cell", "w", "bias"] if mode == "vjp" else [],
            flops=op_flops(macs, 2, elementwise, mode == "vjp")))
    return out


def embedding_workloads(vocab=10000, dim=64, batch=512, bag=20):
    """An embedding bag (sum) of 512 bags of 20 tokens from a 10000 x 64 table:
    the data-dependent read and its scatter-add gradient (issue 15)."""
    outputs = [("bag", (batch, dim))]

    def make(rng):
        return {"W": uniform(rng, (vocab, dim)),
                "tokens": rng.integers(0, vocab, size=(batch, bag)).astype(np.int32)}

    out = []
    for mode in ("forward", "vjp"):
        out.append(Workload(
            name="embedding_bag_%s" % ("fwd" if mode == "forward" else "fwdbwd"),
            title="embedding bag (10000 x 64, 512 bags of 20), %s" % (
                "forward" if mode == "forward" else "fwd+bwd"),
            group="op", mode=mode, tn_file="bench/ops/embedding_bag.tn", tn_fn="embedding_bag",
            torch_fn="embedding_bag", arg_names=["W", "tokens"], outputs=outputs,
            make_inputs=make if mode == "forward" else with_cotangents(make, outputs),
            wrt=["W"] if mode == "vjp" else [],
            flops=batch * bag * dim * (2 if mode == "vjp" else 1)))
    return out


# ---- imported workloads (issue 17) ----------------------------------------------
# The PyTorch modules of bench/models_torch.py, translated by tenet.from_torch.
# make_inputs gives the module's arguments only; the import step
# (torch_worker.run_import) writes the parameters, buffers and cotangents and
# counts the flops (torch.utils.flop_counter: matrix products, convolutions and
# attention, forward and backward; element-wise work is not counted).

def labels(rng, batch, classes):
    return rng.integers(0, classes, batch).astype(np.int64)


def digits_input(batch, flat=False, train=True, masks=False):
    """MNIST digits [B, 1, 28, 28] (or [B, 784]) and, for training, their labels
    (int64, as F.cross_entropy takes them); `masks`: the MNIST CNN's fixed
    dropout masks."""
    def make(rng):
        image, label = digits(rng, batch)
        arrays = {"x": image.reshape(batch, 784) if flat else image}
        if train:
            arrays["label"] = label.astype(np.int64)
            if masks:
                arrays["drop1"] = dropout_mask(rng, (batch, 64, 12, 12), 0.25)
                arrays["drop2"] = dropout_mask(rng, (batch, 128), 0.5)
        return arrays
    return make


def synthetic_input(shape, classes, train=True):
    """Standard-normal inputs (normalised images, token embeddings) and labels."""
    def make(rng):
        arrays = {"x": rng.standard_normal(shape).astype(np.float32)}
        if train:
            arrays["label"] = labels(rng, shape[0], classes)
        return arrays
    return make


# (model, title, batch, inputs(train) -> make_inputs)
MODEL_SPECS = [
    ("mnist_cnn", "MNIST CNN (imported)", 64,
     lambda train: digits_input(64, train=train, masks=True)),
    ("lenet5", "LeNet-5", 256, lambda train: digits_input(256, train=train)),
    ("mlp", "MLP 784-1024-1024-10", 256, lambda train: digits_input(256, flat=True, train=train)),
    ("resnet20", "ResNet-20 (CIFAR, 32x32x3)", 128,
     lambda train: synthetic_input((128, 3, 32, 32), 10, train)),
    ("resnet18", "ResNet-18 (64x64x3)", 32,
     lambda train: synthetic_input((32, 3, 64, 64), 200, train)),
    ("transformer", "transformer encoder block (64 tokens, width 128, 4 heads)", 32,
     lambda train: synthetic_input((32, 64, 128), 10, train)),
]


def model_workloads():
    """Each model's training step (forward, cross-entropy loss, backward, Adam
    update of every parameter; batch norm in training mode) and inference (the
    forward in evaluation mode, no gradient)."""
    out = []
    for model, title, batch, make in MODEL_SPECS:
        for train in (True, False):
            args = ["x", "label"] if train else ["x"]
            if train and model == "mnist_cnn":
                args += ["drop1", "drop2"]
            key = "%s_imported" % model if model == "mnist_cnn" else model
            out.append(Workload(
                name="%s_%s_b%d" % (key, "train" if train else "infer", batch),
                title="%s %s, batch %d" % (title, "training step" if train else "inference",
                                            batch),
                group="model", mode="train" if train else "forward", tn_file="", tn_fn="",
                torch_fn="model:" + model, arg_names=args, outputs=[], make_inputs=make(train),
                imported=True, training=train))
    return out


def layer_specs():
    """(name, title, inputs: {argument: shape}, modes[, multiply-adds]). The
    multiply-adds, where given, replace torch.utils.flop_counter's count (which
    ignores the groups of a grouped convolution's backward): 2 flops each
    forward, 2 more per gradient (input and weight)."""
    both = ("forward", "vjp")
    x = (32, 64, 32, 32)
    return [
        ("conv3x3", "conv 3x3 64->64, 32x32, batch 16", {"x": (16, 64, 32, 32)}, both),
        ("conv3x3_s2", "conv 3x3 stride 2 64->128, 32x32, batch 16", {"x": (16, 64, 32, 32)}, both),
        ("conv1x1", "conv 1x1 64->256, 32x32, batch 16", {"x": (16, 64, 32, 32)}, both),
        ("conv_dw3x3", "depthwise conv 3x3, 128 channels, 32x32, batch 32",
         {"x": (32, 128, 32, 32)}, both, 32 * 128 * 32 * 32 * 9),
        ("maxpool", "max-pool 2x2, 64 x 32x32, batch 32", {"x": x}, both),
        ("avgpool", "avg-pool 2x2, 64 x 32x32, batch 32", {"x": x}, both),
        ("batchnorm", "batch norm (training), 64 x 32x32, batch 32", {"x": x}, both),
        ("layernorm", "layer norm 512, 32 x 128 tokens", {"x": (32, 128, 512)}, both),
        ("softmax", "softmax (32 x 4 x 128 rows of 128)", {"x": (32, 4, 128, 128)}, both),
        ("gelu", "GELU, 32 x 64 x 1024", {"x": (32, 64, 1024)}, both),
        ("attention", "attention T=64 (32 x 4 heads x 32)",
         {name: (32, 4, 64, 32) for name in "qkv"}, both),
        ("attention", "attention T=256 (32 x 4 heads x 32)",
         {name: (32, 4, 256, 32) for name in "qkv"}, both),
        ("linear_relu", "linear 1024->1024 + bias + ReLU, batch 256", {"x": (256, 1024)}, both),
    ]


def layer_workloads():
    out = []
    for name, title, shapes, modes, *macs in layer_specs():
        def make(rng, shapes=shapes):
            return {arg: rng.standard_normal(shape).astype(np.float32)
                    for arg, shape in shapes.items()}
        suffix = "_t%d" % shapes["q"][2] if name == "attention" else ""
        for mode in modes:
            out.append(Workload(
                name="layer_%s%s_%s" % (name, suffix, "fwd" if mode == "forward" else "fwdbwd"),
                title="%s, %s" % (title, "forward" if mode == "forward" else "fwd+bwd"),
                group="layer", mode=mode, tn_file="", tn_fn="", torch_fn="layer:" + name,
                arg_names=list(shapes), outputs=[], make_inputs=make, imported=True,
                training=True, flops=(2 * macs[0] * (3 if mode == "vjp" else 1)) if macs else 0.0))
    return out


def all_workloads(op_batch=100):
    return (capsnet_workloads() + cnn_workloads() + model_workloads() + lltm_workloads() +
            operator_workloads(op_batch) + embedding_workloads() + layer_workloads())


def write_inputs(workload, folder, seed):
    """Writes every input as folder/<name>.npy (what tenet_bench and the
    PyTorch workers both read)."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    for name, array in workload.make_inputs(rng).items():
        np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(array))
