"""What an upstream refused is remembered for an hour from when it was last
taught, then forgotten (``proxy.learned``): an upstream that stopped refusing
(upgraded, or another model loaded under the same name) got the narrowed
request until the proxy restarted. Requests told what to leave out teach
nothing new, so they do not keep an entry alive."""

from __future__ import annotations

from typing import Any

from streamtools.providers import OpenAIChat
from streamtools.proxy.learned import LIFETIME, Refusals


def _made(refusals: Refusals, name: str = "o3") -> tuple[Any, OpenAIChat]:
    made = refusals.applied(OpenAIChat(name, base_url="http://127.0.0.1:9/v1"))
    assert isinstance(made.inner, OpenAIChat)
    return made, made.inner


def test_a_refusal_is_forgotten_after_its_lifetime() -> None:
    now = [1000.0]
    refusals = Refusals(clock=lambda: now[0])
    made, provider = _made(refusals)
    provider.supports_stop = False  # the upstream refused stop
    made.refused.add("temperature")  # and the client's temperature
    refusals.learn(made)
    now[0] += LIFETIME - 1
    told, provider = _made(refusals)
    assert not provider.supports_stop and told.refused == {"temperature"}
    refusals.learn(told)  # it learned nothing new: the entry is not renewed
    now[0] += 1
    fresh, provider = _made(refusals)
    assert provider.supports_stop and fresh.refused == set()
    assert len(refusals) == 0


def test_a_refusal_taught_again_lives_again() -> None:
    now = [0.0]
    refusals = Refusals(lifetime=10, clock=lambda: now[0])
    made, provider = _made(refusals)
    provider.supports_stop = False
    refusals.learn(made)
    now[0] = 15  # forgotten; the next request is refused again and learns it
    again, provider = _made(refusals)
    assert provider.supports_stop
    provider.supports_stop = False
    refusals.learn(again)
    now[0] = 24
    assert not _made(refusals)[1].supports_stop
    now[0] = 25
    assert _made(refusals)[1].supports_stop
