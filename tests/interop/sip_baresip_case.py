"""One call from the bridge to baresip, run inside the network namespace the test made.

``python -m tests.interop.sip_baresip_case OUT`` (see test_sip_baresip.py):
baresip auto-answers on 127.0.0.1, plays ``OUT/play.wav`` and dumps what it
receives; the bridge (in this process) calls it for one session whose
scripted caller speaks, keys ``42#`` and speaks again. Writes ``OUT/result.json``
(the run id, the database, baresip's files) for the test to check.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import grpc

from tests.interop.conftest import SETTINGS
from tests.interop.sip_helpers import free_udp_port, run_through
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer

SCENARIO = {
    "name": "baresip_call",
    "max_duration": 9,
    "first_speaker": "user",
    "user": {
        "persona": {"name": "Ann"},
        "script": [
            {"say": "Hello, I would like to check my account balance, please."},
            {"say": "Here is my code.", "dtmf": "42#", "wait_s": 0.5},
            {"say": "Thank you very much, goodbye."},
        ],
        "yield_after_s": None,
    },
    "agent": {"persona": {"role": "phone"}},
    "success_signals": ["CLEAN_EXIT"],
}

CONFIG = """sip_listen 127.0.0.1:{port}
net_interface 127.0.0.1
audio_source aufile,{play}
audio_player aubridge,nil
audio_alert aubridge,nil
snd_path {out}
module_path /usr/lib/baresip/modules
module g711.so
module aufile.so
module aubridge.so
module sndfile.so
module_app account.so
module_app menu.so
"""


async def main(out: Path) -> None:
    port = free_udp_port()
    (out / "config").write_text(CONFIG.format(port=port, play=out / "play.wav", out=out))
    (out / "accounts").write_text("<sip:bot@127.0.0.1>;regint=0;answermode=auto;"
                                  "audio_codecs=PCMU,PCMA\n")  # fmt: skip
    log = (out / "baresip.log").open("wb")
    phone = await asyncio.create_subprocess_exec(
        "baresip", "-f", str(out), "-s", stdout=log, stderr=log, stdin=asyncio.subprocess.DEVNULL
    )
    try:
        for _ in range(200):  # until baresip says it is ready (bounded: 10 s)
            if b"baresip is ready" in (out / "baresip.log").read_bytes():
                break
            await asyncio.sleep(0.05)
        db = out / "vae.db"
        async with (
            BridgeServer(db, SETTINGS) as bridge,
            grpc.aio.insecure_channel(bridge.address) as channel,
        ):
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            agent = bridge_pb2.ConnectorConfig(kind="sip", url=f"sip:bot@127.0.0.1:{port}")
            run_id, _ = await run_through(bridge, stub, [SCENARIO], agent, within_s=60)
    finally:
        phone.terminate()
        await phone.wait()
        log.close()
    dumps = sorted(
        p.name for p in await asyncio.to_thread(lambda: list(out.glob("dump-*-dec.wav")))
    )
    (out / "result.json").write_text(json.dumps({"run_id": run_id, "db": str(db),
                                                 "received": dumps}))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
