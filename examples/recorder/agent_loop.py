"""A complete agent loop instrumented with judge.recorder (no model, no network: a tiny rule-based
agent with two tools, so the trace it writes is the same every time).

    python examples/recorder/agent_loop.py /tmp/run.jsonl            # the agent follows the correction
    python examples/recorder/agent_loop.py /tmp/drift.jsonl --drift  # the agent keeps the old amount
    judge grade examples/recorder/recorder-scenario.yaml /tmp/run.jsonl --judge none

The clean run passes; the drifting one fails on `superseded-value:refund_amount` at turn 2. The
customer's e-mail address in the first message is redacted as the recorder writes it.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from judge.recorder import Recorder

ORDERS = {"A-1001": {"order_id": "A-1001", "total": 35, "currency": "EUR", "status": "delivered"}}
CONVERSATION = [
    "Hi, this is jane.doe@example.com. Please refund 20 EUR on order A-1001.",
    "Actually make it 25 EUR. Yes, go ahead.",
    "Thanks! Did it go through?",
]


class RefundDesk:
    """Rule-based: finds an order id and an amount in what the user says, looks the order up,
    asks for confirmation, refunds once, then answers questions about it."""

    def __init__(self, rec: Recorder, *, drift: bool = False) -> None:
        self.rec = rec
        self.drift = drift
        self.order: dict | None = None
        self.amount: int | None = None
        self.refund_id: str | None = None
        # The two tools, recorded: arguments, result, status, latency.
        self.lookup_order = rec.wrap(self._lookup_order, name="lookup_order")
        self.refund = rec.wrap(self._refund, name="refund")

    @staticmethod
    async def _lookup_order(order_id: str) -> dict:
        await asyncio.sleep(0)  # an async tool: the recorder wraps coroutine functions too
        if order_id not in ORDERS:
            raise KeyError(f"no order {order_id}")
        return dict(ORDERS[order_id])

    def _refund(self, order_id: str, amount: int) -> dict:
        if amount > ORDERS[order_id]["total"]:
            raise ValueError("refund exceeds the order total")
        self.refund_id = "R-1"
        return {"refund_id": self.refund_id, "order_id": order_id, "amount": amount}

    async def respond(self, text: str) -> None:
        amount = re.search(r"(\d+)\s*EUR", text)
        if amount and not (self.drift and self.amount is not None):
            self.amount = int(amount.group(1))
        order_id = re.search(r"\b[A-Z]-\d{4}\b", text)
        if order_id and self.order is None:
            self.order = await self.lookup_order(order_id.group(0))
            self.rec.snapshot(f"orders/{self.order['order_id']}", phase="before", state=self.order)
        if self.refund_id:
            self.rec.assistant(f"Yes: refund {self.refund_id} of {self.amount} EUR on "
                               f"{self.order['order_id']} is complete.", meta={"model": "rules-v1"})
            return
        if "go ahead" in text.lower():
            self.refund(self.order["order_id"], self.amount)
            self.rec.state_write("refund_a1001", "done")
            self.rec.snapshot(f"refunds/{self.refund_id}", phase="after",
                              state={"refund_id": self.refund_id, "amount": self.amount})
            self.rec.assistant(f"Refunded {self.amount} EUR on {self.order['order_id']}.",
                               meta={"model": "rules-v1", "finish_reason": "stop"})
            return
        self.rec.assistant(f"Order {self.order['order_id']} ({self.order['total']} EUR) is refundable. "
                           f"Shall I refund {self.amount} EUR?", meta={"model": "rules-v1"})


async def main(out: Path, drift: bool = False) -> Path:
    with Recorder(out, run_id="drift" if drift else "clean", scenario="recorder-refund",
                  agent={"name": "refund-desk", "version": "1.0", "model": "rules-v1"},
                  retention="example data; delete freely") as rec:
        desk = RefundDesk(rec, drift=drift)
        for message in CONVERSATION:
            rec.user(message)  # a user message starts a new turn
            await desk.respond(message)
    return out


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--drift"]
    path = asyncio.run(main(Path(args[0] if args else "recorder-run.jsonl"), drift="--drift" in sys.argv))
    print(f"wrote {path}")
