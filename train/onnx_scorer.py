"""The exported reranker as it would ship: an ONNX cross-encoder on onnxruntime + tokenizers, no torch.

`OnnxCrossEncoder(folder)` reads `model.onnx` (or the file named) and `tokenizer.json` from the folder that
`python -m train.export` writes; `score(query, passages)` gives one logit per passage (higher: more relevant).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


class OnnxCrossEncoder:
    def __init__(
        self,
        folder: str | Path,
        model_file: str = "model_int8.onnx",
        max_length: int = 160,
        threads: int = 2,
        batch_size: int = 32,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        folder = Path(folder)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(folder / model_file), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # as rag.rerank: a question longer than the window is cut too
        self.tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
        self.tokenizer.enable_padding()
        self.batch_size = batch_size

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        scores: list[np.ndarray] = []
        for start in range(0, len(passages), self.batch_size):
            chunk = passages[start : start + self.batch_size]
            encodings = self.tokenizer.encode_batch([(query, p) for p in chunk])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            logits = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            scores.append(np.asarray(logits, dtype=np.float32).reshape(-1))
        return np.concatenate(scores) if scores else np.zeros(0, dtype=np.float32)
