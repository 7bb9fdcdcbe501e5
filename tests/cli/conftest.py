"""The CLI tests drive a real bridge: the bridge tests' own fixture, shared."""

from tests.bridge_service.conftest import bridge

__all__ = ["bridge"]
