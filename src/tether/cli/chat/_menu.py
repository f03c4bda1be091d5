"""A single-key menu under a question: a letter answers at once, or ↑/↓ then Enter.

A key that is no answer is explained on the hint line; Ctrl+C raises `KeyboardInterrupt`.
After the choice, only the chosen line stays on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl

from tether.cli._sanitize import visible

__all__ = ["Choice", "choose"]


@dataclass(frozen=True, slots=True)
class Choice:
    """One answer: the key that picks it and what it says."""

    key: str
    label: str


class _Menu:
    def __init__(self, question: str, choices: list[Choice]) -> None:
        self.question = question
        self.choices = choices
        self.at = 0
        self.done = False
        self.hint = ""

    def keys(self) -> str:
        letters = [c.key for c in self.choices]
        return ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else letters[0]

    def lines(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = [("", self.question + "\n")]
        if self.done:
            return [*out, ("bold", f"  ❯ {self.choices[self.at].label}\n")]
        for n, choice in enumerate(self.choices):
            mark, style = ("❯", "bold reverse") if n == self.at else (" ", "")
            out.append((style, f"  {mark} {choice.key}  {choice.label}"))
            out.append(("", "\n"))
        hint = self.hint or f"press {self.keys()}, or ↑/↓ then Enter · Ctrl+C stops the reply"
        out.append(("italic" if self.hint else "", f"  {hint}"))
        return out

    def refuse(self, key: str) -> None:
        shown = repr(visible(key)) if key.isprintable() and key else "that key"
        self.hint = f"{shown} is not an answer here: press {self.keys()}, or ↑/↓ then Enter"


def _bindings(menu: _Menu) -> KeyBindings:
    keys = KeyBindings()

    def pick(event: KeyPressEvent, index: int) -> None:
        menu.at, menu.done = index, True
        event.app.exit(result=menu.choices[index].key)

    for index, choice in enumerate(menu.choices):
        keys.add(choice.key)(lambda e, i=index: pick(e, i))
        keys.add(choice.key.upper())(lambda e, i=index: pick(e, i))

    @keys.add(Keys.Up)
    def _up(event: KeyPressEvent) -> None:
        menu.at, menu.hint = (menu.at - 1) % len(menu.choices), ""

    @keys.add(Keys.Down)
    def _down(event: KeyPressEvent) -> None:
        menu.at, menu.hint = (menu.at + 1) % len(menu.choices), ""

    @keys.add(Keys.Enter)
    def _enter(event: KeyPressEvent) -> None:
        pick(event, menu.at)

    @keys.add(Keys.ControlC)
    @keys.add(Keys.ControlD)
    def _stop(event: KeyPressEvent) -> None:
        event.app.exit(exception=KeyboardInterrupt())

    @keys.add(Keys.Any)
    def _other(event: KeyPressEvent) -> None:
        menu.refuse(event.data)

    return keys


async def choose(question: str, choices: list[tuple[str, str]]) -> str:
    """Show `question` and the `(key, label)` choices; the key of the chosen answer."""
    menu = _Menu(question, [Choice(key, label) for key, label in choices])
    app: Application[Any] = Application(
        layout=Layout(Window(FormattedTextControl(menu.lines, focusable=True), wrap_lines=True)),
        key_bindings=_bindings(menu),
        full_screen=False,
        erase_when_done=False,
    )
    return str(await app.run_async())
