"""What a port made: the ported text and, per converted or flagged use, its line and status.
Apart from the rewrite so the process that asked for a port reads it without libcst."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PortItem:
    line: int
    status: str  # converted | manual | unsupported
    what: str
    code: str = ""  # MS301 / MS302 for the items a person must look at
    call: bool = False  # a call of a torch API (what the conversion rate by calls counts)

    def to_dict(self) -> dict:
        code = {"code": self.code} if self.code else {}
        return {"line": self.line, "status": self.status, "what": self.what, **code, **({"call": True} if self.call
                                                                                        else {})}


@dataclass
class PortResult:
    path: str
    text: str  # the ported source
    items: list[PortItem] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(item.status == status for item in self.items)

    @property
    def rate(self) -> float:
        return self.count("converted") / len(self.items) if self.items else 1.0

    @property
    def calls(self) -> tuple[int, int]:
        """Torch API calls converted, and all the port met, as PaConvert counts its conversion rate."""
        calls = [item for item in self.items if item.call]
        return sum(item.status == "converted" for item in calls), len(calls)

    @property
    def complete(self) -> bool:
        return all(item.status == "converted" for item in self.items)

    def to_dict(self) -> dict:
        return {"path": self.path, "converted": self.count("converted"), "manual": self.count("manual"),
                "unsupported": self.count("unsupported"), "rate": round(self.rate, 4),
                "calls": dict(zip(("converted", "total"), self.calls)),
                "items": [item.to_dict() for item in self.items]}
