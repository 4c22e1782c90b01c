#!/bin/sh
# What `npm test` needs beyond Node (run before it by npm's pretest): redis-server for the queue tests, chromium
# for the pages' browser tests, promtool and amtool to check the alert rules and routes, and Compose to check
# docker-compose.yml (`docker compose`, or Debian's Compose 1, `docker-compose`). Each missing one is
# installed from Debian's packages when this runs as root with apt-get; otherwise it stops with one line naming
# the command to run.
set -u

# Each tool, then the Debian package that has it.
set -- redis-server redis-server chromium chromium promtool prometheus amtool prometheus-alertmanager \
  docker-compose docker-compose

# chromium is where the browser tests launch it: CHROMIUM_PATH, or Debian's /usr/bin/chromium when that is unset.
found() {
  case $1 in
    chromium) test -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ;;
    docker-compose) command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

# Sets $tools and $packages to the missing ones, space-separated.
look() {
  tools='' packages=''
  while [ $# -gt 0 ]; do
    found "$1" || { tools="${tools:+$tools }$1"; packages="${packages:+$packages }$2"; }
    shift 2
  done
}

look "$@"
[ -z "$tools" ] && exit 0

if [ -n "${CHROMIUM_PATH:-}" ] && ! found chromium; then
  echo "npm test: CHROMIUM_PATH=$CHROMIUM_PATH is not an executable: point it at chromium, or unset it for /usr/bin/chromium" >&2
  exit 1
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "npm test needs $tools: run \`sudo apt-get install -y $packages\` (Debian's packages), then npm test again" >&2
  exit 1
fi

echo "npm test: installing $packages from Debian's packages for $tools" >&2
wanted=$packages
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # one word per package
if ! { apt-get update -qq && apt-get install -y -qq $wanted; } >/dev/null 2>&1; then
  echo "npm test needs $tools, and \`apt-get install -y $wanted\` failed: run it to see why" >&2
  exit 1
fi

look "$@"
if [ -n "$tools" ]; then
  echo "npm test needs $tools, still not found after \`apt-get install -y $wanted\`" >&2
  exit 1
fi
