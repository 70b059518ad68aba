"""Scenario: a whole real heap from an HF Trainer run: transformers' Trainer trains a small GPT-2
(built from a config, no weights downloaded) for a few steps on the CPU, with no checkpoint and no
reporting, then keeps the trainer and waits. tests/integration/test_books.py balances its heap.
Prints {"pid", "torch", "transformers", "steps"}, then READY, and waits."""
import contextlib
import io
import json
import os
import tempfile
import threading
import warnings

import torch
import transformers
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=32)
model = GPT2LMHeadModel(config)
data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 64, (16, 16))]
out = tempfile.mkdtemp(prefix="culeak-trainer-")
args = TrainingArguments(output_dir=out, max_steps=4, per_device_train_batch_size=4,
                         report_to=[], save_strategy="no", logging_strategy="no",
                         use_cpu=True, disable_tqdm=True, dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, train_dataset=data)
with contextlib.redirect_stdout(io.StringIO()):   # its metrics line is no truth
    result = trainer.train()
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__,
                  "transformers": transformers.__version__, "steps": result.global_step}),
      flush=True)
print("READY", flush=True)
threading.Event().wait()
