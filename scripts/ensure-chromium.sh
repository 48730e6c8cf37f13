#!/usr/bin/env bash
# `npm test`'s pretest: the browser tests drive Debian's Chromium at /usr/bin/chromium, which
# `npm ci` cannot install. Installs it when it is missing and this user can install packages
# (root, or passwordless sudo, with apt-get); otherwise stops at once with the line to run.
set -euo pipefail

# BATON_TEST_CHROMIUM: only for the test of this script, which pretends the browser is missing.
CHROMIUM="${BATON_TEST_CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0

# --no-install-recommends: chromium's recommends pull about 130 more packages, systemd among them.
INSTALL='apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium'

if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "npm test: $CHROMIUM is missing (the browser tests need it); installing Debian's chromium..." >&2
    sh -c "$INSTALL"
    exit 0
  fi
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "npm test: $CHROMIUM is missing (the browser tests need it); installing Debian's chromium with sudo..." >&2
    sudo -n sh -c "$INSTALL"
    exit 0
  fi
fi

echo "npm test: $CHROMIUM is missing (the browser tests drive Debian's Chromium) and this user cannot install packages. Run, as root:" >&2
echo "  $INSTALL" >&2
exit 1
