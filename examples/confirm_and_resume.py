"""Human confirmation: approve, edit or reject a call, and remember the answer as a rule.

A tool declared with `requires_confirmation=True` (or any tool that is not read-only)
pauses the reply with a `RequireUserConfirmEvent`. The caller answers every pending call
with a `ConfirmResult` and resumes with a `UserConfirmResultEvent`:

- `confirmed=True` runs it; `rules=tc.suggested_rules` also allows matching calls later;
- a changed `tool_call.input` (a JSON string) runs the edited call instead;
- `confirmed=False` rejects it: the model sees that the user said no.

Run it: `python examples/confirm_and_resume.py` (offline).
"""

import asyncio
import json

from tether.agent import Agent
from tether.event import (
    ConfirmResult,
    ReplyEndEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
)
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool

sent: list[str] = []


@tool(requires_confirmation=True)
def send_email(to: str, body: str) -> str:
    """Send an email."""
    sent.append(f"{to}: {body}")
    return f"sent to {to}"


call = ScriptedChatModel.tool_call
model = ScriptedChatModel(
    [
        AssistantMsg("assistant", [call("send_email", {"to": "bob@example.com", "body": "Hi"})]),
        AssistantMsg("assistant", "Sent your edited greeting."),
        AssistantMsg("assistant", [call("send_email", {"to": "eve@example.com", "body": "Yo"})]),
        AssistantMsg("assistant", "Understood, I did not send it."),
        AssistantMsg("assistant", [call("send_email", {"to": "bob@example.com", "body": "Bye"})]),
        AssistantMsg("assistant", "Sent."),
        AssistantMsg("assistant", [call("send_email", {"to": "bob@example.com", "body": "PS"})]),
        AssistantMsg("assistant", "Sent without asking: you allowed emails earlier."),
    ]
)
agent = Agent(
    name="mailer",
    system_prompt="You send emails.",
    model=model,
    toolkit=Toolkit(tools=[send_email]),
)


async def run(inputs) -> tuple[str, RequireUserConfirmEvent | None]:
    """Drive one stream; return the final text, or the pause event if it paused."""
    pause, text = None, ""
    async for event in agent.reply_stream(inputs):
        if isinstance(event, RequireUserConfirmEvent):
            pause = event
        elif isinstance(event, ReplyEndEvent):
            text = event.msg.get_text_content()
    return text, pause


async def ask_and_answer(text: str, answer) -> str:
    """Start a reply; while it pauses, answer each pending call with `answer(tool_call)`."""
    final, pause = await run(UserMsg("user", text))
    while pause is not None:
        results = [answer(tc) for tc in pause.tool_calls]
        final, pause = await run(
            UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=results)
        )
    return final


def edit(tc) -> ConfirmResult:
    print(f"asked: {tc.name} {tc.input}; editing the body")
    new_input = {**json.loads(tc.input), "body": "Hello Bob"}
    return ConfirmResult(
        confirmed=True, tool_call=tc.model_copy(update={"input": json.dumps(new_input)})
    )


def reject(tc) -> ConfirmResult:
    print(f"asked: {tc.name} {tc.input}; rejecting")
    return ConfirmResult(confirmed=False, tool_call=tc)


def allow_always(tc) -> ConfirmResult:
    print(
        f"asked: {tc.name} {tc.input}; allowing, with the rules {[str(r) for r in tc.suggested_rules]}"
    )
    return ConfirmResult(confirmed=True, tool_call=tc, rules=tc.suggested_rules)


async def main() -> None:
    print(await ask_and_answer("Say hi to Bob.", edit))
    print(await ask_and_answer("Email Eve.", reject))
    print(await ask_and_answer("Say bye to Bob.", allow_always))
    print(f"allowed from now on: {[str(r) for r in agent.state.permission_context.allow_rules]}")
    print(await ask_and_answer("And a PS.", reject))  # the rule allows it: nobody is asked
    print("sent:", sent)


asyncio.run(main())
