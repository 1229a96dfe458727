#!/usr/bin/env bash
# The only set-up: README's first command, and what .ci/run runs before the tests, so CI tests the
# set-up a newcomer follows. Installs only what is missing: the Debian packages the build and the tests
# use, Node (only when `node` is absent), a Rust toolchain (only when `cargo` is absent), then builds the
# release server exactly as `cargo xtask dist` and README's run command do, so neither rebuilds it, and
# `tauri-driver` into target/tools for the settings app's window test (which installs it only when absent).
#
#   ./setup.sh              everything, then the release build and tauri-driver
#   ./setup.sh --no-build   packages and toolchain only
set -euo pipefail
cd "$(dirname "$0")"
build=1
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown argument '$a' (send --no-build or nothing)" >&2; exit 2 ;;
  esac
done
say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: FAILED: %s\n' "$*" >&2; exit 1; }

# Root needs no sudo (and a container often has none); anyone else needs it for apt-get.
if [ "$(id -u)" = 0 ]; then SUDO=(); elif command -v sudo >/dev/null; then SUDO=(sudo); else SUDO=(); fi
export DEBIAN_FRONTEND=noninteractive

# command:package. dbus + gnome-keyring: the token store against a real Secret Service
# (tests/tests/e2e/store_race.rs); openssl: a second opinion on the bundle signature; python3 with venv:
# the Python MCP client (tests/tests/e2e/python.rs); WebKitGTK 4.1 headers: building the settings app
# (auth-app/); Xvfb and WebKitWebDriver: its window test (auth-app/tests/window.rs); Chromium and
# ChromeDriver: the MCP Apps views in a real browser (tests/tests/e2e/apps_browser.rs); curl: rustup.
missing=()
for pair in curl:curl cc:gcc pkg-config:pkg-config gnome-keyring-daemon:gnome-keyring dbus-daemon:dbus \
  dbus-run-session:dbus openssl:openssl Xvfb:xvfb WebKitWebDriver:webkit2gtk-driver chromium:chromium \
  chromedriver:chromium-driver; do
  command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
[ -e /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
pkg-config --exists webkit2gtk-4.1 2>/dev/null || missing+=(libwebkit2gtk-4.1-dev)
# Node: the .mcpb launcher and the official mcpb tool (tests/tests/e2e/mcpb.rs). Debian's nodejs and
# npm are two packages; NodeSource's nodejs already carries npm and conflicts with Debian's npm, so npm
# is asked for only when node itself is missing, and never beside an existing node.
command -v node >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing ${missing[*]}, and this is not a Debian/Ubuntu system (no apt-get): install them with your package manager, then run ./setup.sh again"
  if [ "$(id -u)" != 0 ] && [ ${#SUDO[@]} = 0 ]; then
    die "missing ${missing[*]}; installing them needs root, and sudo is not installed: run ./setup.sh as root"
  fi
  # Package lists are stale on a fresh machine: installing without an update fails on held packages.
  say "installing ${missing[*]} (apt-get update first)"
  "${SUDO[@]}" apt-get update -qq || die "apt-get update failed (is the network up?)"
  # Duplicates (dbus twice) are harmless to apt-get.
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed (its messages are above)"
else
  say "Debian packages: all present"
fi
command -v npm >/dev/null || die "node is installed but npm is not: install npm for that node (e.g. apt-get install npm), then run ./setup.sh again"

# Rust: rustup only when there is no cargo at all. `curl … | sh` exits 0 when the download fails, so
# the installer is downloaded to a file first and its failure stops the set-up.
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null; then
  say "installing Rust with rustup (into ~/.cargo)"
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs -o "$tmp" || die "could not download rustup from https://sh.rustup.rs (is the network up?)"
  sh "$tmp" -y --profile minimal --component rustfmt,clippy || die "the rustup installer failed (its messages are above)"
  command -v cargo >/dev/null || die "rustup finished but cargo is not on PATH ($HOME/.cargo/bin)"
  say "Rust installed: in this shell, run  export PATH=\"\$HOME/.cargo/bin:\$PATH\"  (new shells have it)"
else
  # fmt and clippy are part of the test run (.ci/run); a toolchain without them gets them here.
  if command -v rustup >/dev/null; then rustup component add rustfmt clippy >/dev/null 2>&1 || say "could not add rustfmt/clippy with rustup (offline?)"; fi
  say "Rust: $(cargo --version)"
fi

if [ "$build" = 1 ]; then
  # -p vitals --bin vitals-mcp: the features `cargo xtask dist` and README's run command build with,
  # so both reuse this build instead of compiling the server again with the workspace's feature set.
  say "building the release server (a few minutes the first time; crates come from crates.io)"
  cargo build --release --locked -p vitals --bin vitals-mcp || die "cargo build failed (its messages are above)"
  say "done: target/release/vitals-mcp. Run it with  cargo run --release --locked -p vitals --bin vitals-mcp -- --check"
  # The WebDriver server of the settings app's window test (auth-app/tests/window.rs), a tool like the
  # Debian packages above: from crates.io into the repo's target/tools, not ~/.cargo.
  tools="${CARGO_TARGET_DIR:-target}/tools"
  if [ ! -x "$tools/bin/tauri-driver" ]; then
    say "installing tauri-driver into $tools (the settings window's test drives it)"
    cargo install --quiet tauri-driver --version '^2' --locked --root "$tools" || die "cargo install tauri-driver failed (its messages are above)"
  fi
fi
