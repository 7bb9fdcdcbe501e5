#!/usr/bin/env bash
# Install what the SIP tests need on a fresh Debian machine (as root): the
# third-party SIP software they start on loopback ports of their own (SIPp as
# scripted far ends and callers, baresip as an auto-answering phone, Kamailio as
# proxy and registrar; the packages' own services are never started), iproute2
# for the network namespaces, and vae's `sip` extra. Idempotent.
set -euo pipefail

need=()
command -v sipp >/dev/null || need+=(sip-tester)
command -v baresip >/dev/null || need+=(baresip-core)
command -v kamailio >/dev/null || need+=(kamailio)
command -v ip >/dev/null || need+=(iproute2)
command -v unshare >/dev/null || need+=(util-linux)
if ((${#need[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # No service of these packages may start (in CI there is no init anyway).
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends "${need[@]}"
  rm -f /usr/sbin/policy-rc.d
fi

python -m pip install --quiet "sipmessage>=0.7"

sipp -v 2>&1 | grep -m1 SIPp || true  # grep -m1 closes the pipe: sipp may die of SIGPIPE
baresip -h 2>&1 | grep -m1 -i baresip || true
kamailio -v | head -1 || true
python -c "import sipmessage; print('sipmessage', sipmessage.__version__)"
