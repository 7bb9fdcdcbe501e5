"""The WebRTC connector's options and URLs are checked before any session is dialled.

(The connector itself runs end to end in tests/interop/test_webrtc.py, inside a
network namespace.)
"""

from __future__ import annotations

import pytest

from vae.bridge_service.connectors.base import (
    ConnectorConfig,
    ConnectorError,
    ConnectorOptionsError,
    capabilities,
    check_connector,
    connector_capabilities,
    default_capacity,
)
from vae.bridge_service.connectors.webrtc.connector import check_config

URL = "webrtc+http://127.0.0.1:7860/api/offer"


def test_good_options_mix_pipecat_and_webrtc_keys() -> None:
    options = check_config(
        ConnectorConfig(
            "webrtc",
            URL,
            {"ice_timeout_s": 3, "kickoff_text": "Hello", "request_data": {"caller": "vae"}},
        )
    )
    assert (options.ice_timeout_s, options.pipecat.kickoff_text) == (3.0, "Hello")
    assert options.request_data == {"caller": "vae"}
    assert check_config(ConnectorConfig("webrtc", URL, {})).ice_timeout_s == 15.0


@pytest.mark.parametrize(
    ("url", "options", "message"),
    [
        ("ws://127.0.0.1:1", {}, "needs a webrtc\\+http:// or webrtc\\+https:// url"),
        (URL, {"ice_timeout_s": 0}, "ice_timeout_s must be positive"),
        (URL, {"ice_timeout_s": "soon"}, "'ice_timeout_s' must be a number"),
        (URL, {"request_data": [1]}, "request_data must be a JSON object"),
        (URL, {"bogus": True}, "unknown option 'bogus'"),
    ],
)
def test_wrong_options_are_refused(url: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(ConnectorOptionsError, match=message):
        check_connector(ConnectorConfig("webrtc", url, options))


def test_the_kinds_declare_text_and_their_capacity() -> None:
    for kind in ("webrtc", "livekit"):
        caps, why = connector_capabilities(kind)
        assert caps.text and not caps.virtual_clock and "real time" in why
    assert default_capacity("webrtc") == 1 and default_capacity("livekit") > 1000
    assert not capabilities(object()).text


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without aiortc the webrtc kind says which extra to install (never a bare ImportError)."""
    import sys

    from vae.bridge_service.connectors import registry

    monkeypatch.setitem(
        registry._registry, "webrtc", "vae.bridge_service.connectors.webrtc.connector:dial"
    )
    for name in [m for m in sys.modules if m.startswith("vae.bridge_service.connectors.webrtc.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "aiortc", None)  # an import of it fails
    with pytest.raises(ConnectorError, match=r"pip install 'vae\[webrtc\]'"):
        registry.resolve_connector("webrtc")
