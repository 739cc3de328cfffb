"""The proxy's answers where the client's API shows in its headers and body rather
than in the path: unknown paths, a single model, compressed bodies, the legacy
``functions`` parameters and past calls whose arguments are not JSON. The official
``openai`` and ``anthropic`` SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

import anthropic
import openai
import pytest
from test_proxy import _anthropic, _openai, proxy


def test_an_unknown_path_is_answered_in_the_clients_format() -> None:
    # the anthropic SDK sends anthropic-version with every request: its client
    # got OpenAI's error shape for a path outside /v1/messages
    with proxy([]) as (url, _):
        with pytest.raises(anthropic.NotFoundError) as info:
            _anthropic(url).beta.files.list()
        assert isinstance(info.value.body, dict)
        assert info.value.body["type"] == "error"
        assert info.value.body["error"]["type"] == "not_found_error"
        with pytest.raises(openai.NotFoundError) as found:
            _openai(url).files.list()
        assert found.value.code is None and found.value.type == "not_found_error"
