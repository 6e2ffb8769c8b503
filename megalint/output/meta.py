"""What renderers know about a rule besides the finding itself."""

from __future__ import annotations

from dataclasses import dataclass

from megalint.diagnostics import Severity

TOOL_NAME = "megalint"
# Where the project lives; SARIF's driver.informationUri needs an absolute URI.
INFORMATION_URI = "https://github.com/megalint/megalint"


@dataclass(frozen=True)
class RuleMeta:
    code: str
    name: str
    severity: Severity
    summary: str
    help_uri: str | None = None
    what: str = ""
    why: str = ""
    example: str = ""
    use_instead: str = ""
    fix_safety: str = ""
    tags: tuple[str, ...] = ()

    def sections(self) -> list[tuple[str, str, bool]]:
        """(heading, body, is_code) for each documentation field that is filled in."""
        out = []
        for heading, body, code in (
            ("What it does", self.what, False),
            ("Why is this bad?", self.why, False),
            ("Example", self.example, True),
            ("Use instead", self.use_instead, True),
            ("Fix safety", self.fix_safety, False),
        ):
            if body and body.strip():
                out.append((heading, body.strip("\n"), code))
        return out

    def help_text(self) -> str:
        parts = [self.summary]
        for heading, body, code in self.sections():
            if code:
                body = "\n".join("    " + line for line in body.splitlines())
            parts.append(f"{heading}\n{body}")
        if self.help_uri:
            parts.append(f"Documentation: {self.help_uri}")
        return "\n\n".join(parts)

    def help_markdown(self) -> str:
        parts = [self.summary]
        for heading, body, code in self.sections():
            if code:
                fence = "```"
                while fence in body:
                    fence += "`"
                body = f"{fence}bash\n{body}\n{fence}"
            parts.append(f"## {heading}\n\n{body}")
        if self.help_uri:
            parts.append(f"[Documentation]({self.help_uri})")
        return "\n\n".join(parts)
