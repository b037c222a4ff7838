"""The model zoo: ``python -m tenet.zoo`` imports the models people use -- every
classifier ``torchvision.models.list_models()`` returns and Hugging Face's BERT, GPT-2, T5
and ViT from tiny configs (no downloads) -- through ``tenet.from_torch`` and checks each
against PyTorch: the forward output and every parameter gradient in training mode, the
buffers after one SGD step and the parameters after two (through ``Program.module()``),
the forward in evaluation mode, and optionally the training step's time against eager.
It prints (or writes, ``--markdown FILE``) the coverage table of docs/import.md.

Needs torchvision and transformers (``pip install torchvision transformers``)."""

import argparse
import copy
import statistics
import sys
import time
import warnings

import torch
from torch import nn

import tenet

# Inputs the architectures need (their minimum sizes); everything else runs at --size.
_SIZES = {"inception_v3": 75, "maxvit_t": 224}


def torchvision_names():
    import torchvision
    return list(torchvision.models.list_models(module=torchvision.models))


def _torchvision(name, batch, size):
    import torchvision
    options = {"num_classes": 10}
    if name in ("googlenet", "inception_v3"):
        options.update(aux_logits=False, init_weights=False)
    size = _SIZES.get(name, size)
    if name.startswith("vit_"):
        options["image_size"] = size
    model = torchvision.models.get_model(name, weights=None, **options)
    return model, (torch.randn(batch, 3, size, size),)


class _Logits(nn.Module):
    """A Hugging Face model's logits as the forward's one tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args):
        return self.model(*args).logits


class _Seq2SeqLogits(_Logits):
    def forward(self, input_ids, decoder_input_ids):
        return self.model(input_ids=input_ids, decoder_input_ids=decoder_input_ids).logits


def _huggingface(name, batch, size):
    import transformers as hf
    tokens = torch.randint(1, 100, (batch, 8))
    small = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                 intermediate_size=64)
    if name == "bert":
        config = hf.BertConfig(vocab_size=100, max_position_embeddings=64, num_labels=10,
                               **small)
        return _Logits(hf.BertForSequenceClassification(config)), (tokens,)
    if name == "gpt2":
        config = hf.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2)
        return _Logits(hf.GPT2LMHeadModel(config)), (tokens,)
    if name == "t5":
        config = hf.T5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=2,
                             num_heads=2, decoder_start_token_id=0)
        model = _Seq2SeqLogits(hf.T5ForConditionalGeneration(config))
        return model, (tokens, torch.randint(1, 100, (batch, 5)))
    config = hf.ViTConfig(image_size=32, patch_size=8, num_channels=3, num_labels=10, **small)
    return _Logits(hf.ViTForImageClassification(config)), (torch.randn(batch, 3, 32, 32),)


HUGGING_FACE = ("bert", "gpt2", "t5", "vit")


def build(name, batch=2, size=64):
    """(module, example arguments) of a zoo model: a torchvision name or 'hf-<name>'."""
    if name.startswith("hf-"):
        return _huggingface(name[3:], batch, size)
    return _torchvision(name, batch, size)


def _largest_difference(pairs):
    """max |a - b| over the (ours, PyTorch's) pairs, relative to the largest |b| of
    them all (0 for none)."""
    pairs = list(pairs)
    scale = max((b.abs().max().item() for _, b in pairs if b.numel()), default=0.0) or 1.0
    return max(((a - b).abs().max().item() / scale for a, b in pairs if b.numel()),
               default=0.0)


def _first_line(error):
    text = str(error).strip().splitlines()
    line = text[0] if text else type(error).__name__
    return f"{type(error).__name__}: {line[:160]}"


def _loss(output, weights):
    """A fixed random weighting of the output, the same for both sides."""
    if not weights:
        generator = torch.Generator().manual_seed(1)
        weights.append(torch.randn(output.shape, generator=generator, dtype=output.dtype))
    return (output * weights[0]).sum()


def check(model, args, dtype=torch.float64, lr=0.01):
    """Imports ``model`` and compares it with PyTorch; returns {what: difference}, each
    relative to the largest value of its kind in the model (the largest output, gradient,
    buffer or parameter): tensors that are zero in exact arithmetic (a key bias's
    gradient under softmax, the running mean after a normalised layer) hold rounding
    noise on both sides, which a per-tensor relative difference would blow up."""
    args = tuple(a.to(dtype) if a.is_floating_point() else a for a in args)
    reference = copy.deepcopy(model).to(dtype).train()
    found = {}
    program = tenet.from_torch(copy.deepcopy(model).to(dtype).train(), args)
    module = program.module()
    ours = torch.optim.SGD(module.parameters(), lr=lr)
    theirs = torch.optim.SGD(reference.parameters(), lr=lr)
    weights = []
    for step in range(2):
        torch.manual_seed(step)
        expected = reference(*args)
        torch.manual_seed(step)
        got = module(*args)
        ours.zero_grad()
        theirs.zero_grad()
        _loss(got, weights).backward()
        _loss(expected, weights).backward()
        if step == 0:
            found["forward"] = _largest_difference([(got.detach(), expected.detach())])
            mine = dict(module.named_parameters())
            found["gradient"] = _largest_difference(
                (mine[k].grad, p.grad) for k, p in reference.named_parameters()
                if p.grad is not None)
        ours.step()
        theirs.step()
        if step == 0:
            mine = dict(module.named_buffers())
            found["buffers"] = _largest_difference(
                (mine[k].to(b.dtype), b) for k, b in reference.named_buffers()
                if b.is_floating_point())
    mine = dict(module.named_parameters())
    found["2 steps"] = _largest_difference(
        (mine[k].detach(), p.detach()) for k, p in reference.named_parameters())
    reference.eval()
    module.eval()
    with torch.no_grad():
        found["eval"] = _largest_difference([(module(*args), reference(*args))])
    return found


def step_times(model, args, repeats=7):
    """Median seconds of a float32 training step (forward + backward), eager and Tenet."""
    eager = copy.deepcopy(model).train()
    module = tenet.from_torch(copy.deepcopy(model).train(), args).module()
    times = []
    for candidate in (eager, module):
        samples = []
        for k in range(repeats + 1):
            start = time.perf_counter()
            candidate(*args).sum().backward()
            if k:  # the first call warms up (and compiles)
                samples.append(time.perf_counter() - start)
        times.append(statistics.median(samples))
    return times


COLUMNS = ("forward", "gradient", "buffers", "2 steps", "eval")


def run(name, batch, size, timed, max_parameters):
    """One row of the table: the model's name, then its cells."""
    try:
        model, args = build(name, batch, size)
    except Exception as error:  # noqa: BLE001 (a builder torchvision refuses)
        return [name, f"not built ({_first_line(error)})"] + [""] * (len(COLUMNS) + 1)
    count = sum(p.numel() for p in model.parameters())
    if count > max_parameters:
        return [name, f"skipped: {count / 1e6:.0f} M parameters (--max-parameters)"] + \
            [""] * (len(COLUMNS) + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = check(model, args)
            ratio = ""
            if timed:
                eager, ours = step_times(model, args)
                ratio = f"{eager / ours:.2f}x ({ours * 1e3:.1f} ms)"
    except Exception as error:  # noqa: BLE001 (a refusal is the table's content)
        return [name, _first_line(error)] + [""] * (len(COLUMNS) + 1)
    return [name, "yes"] + [f"{found[c]:.1e}" for c in COLUMNS] + [ratio]


def table(rows, timed):
    header = ["model", "import"] + list(COLUMNS) + ["step vs eager" if timed else ""]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |"
              for row in rows]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tenet.zoo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="these models (torchvision names, "
                        "hf-bert, hf-gpt2, hf-t5, hf-vit)")
    parser.add_argument("--skip", nargs="*", default=[], help="leave these out")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=64, help="input images' side")
    parser.add_argument("--time", action="store_true",
                        help="also time a float32 training step against eager")
    parser.add_argument("--max-parameters", type=float, default=150e6,
                        help="skip larger models (memory: float64 copies)")
    parser.add_argument("--markdown", help="write the table to this file")
    options = parser.parse_args(argv)
    names = options.only or (torchvision_names() + [f"hf-{n}" for n in HUGGING_FACE])
    rows = []
    for name in names:
        if name in options.skip:
            continue
        start = time.perf_counter()
        rows.append(run(name, options.batch, options.size, options.time,
                        options.max_parameters))
        print(f"{' | '.join(str(c) for c in rows[-1])}  [{time.perf_counter() - start:.0f} s]",
              flush=True)
    text = table(rows, options.time)
    if options.markdown:
        with open(options.markdown, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    print(text)
    failed = [row[0] for row in rows if row[1] != "yes" and not row[1].startswith("skipped")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
