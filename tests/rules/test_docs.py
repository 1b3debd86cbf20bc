from ascend_lsp.rules import RULES
from ascend_lsp.rules.docs import expected


def test_every_rule_has_a_current_doc_page_and_index_row() -> None:
    pages = expected()
    stale = [str(path) for path, text in pages.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"run `make docs`: stale {stale}"
    assert {p.stem for p in pages if p.parent.name == "rules"} == set(RULES)


def test_every_rule_documents_every_section() -> None:
    for rule in RULES.values():
        for section in ("what", "why", "example", "fix", "source"):
            assert getattr(rule.doc, section).strip(), f"{rule.code} lacks '{section}'"
