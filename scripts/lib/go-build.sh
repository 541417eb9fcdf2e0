# go_build MODULE OUT: builds the Go module in MODULE (a folder of this repository) into OUT
# (under target/) and prints OUT's path. The modules come from the Go module proxy at the
# versions the module's go.sum pins; quick when nothing changed (Go's build cache). Needs Go,
# which the machine has (on PATH or in /usr/local/go/bin). Sourced by scripts/build-go-*.sh.
go_build() {
    local root module="$1" out="$2"
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    export PATH="$PATH:/usr/local/go/bin"
    if ! command -v go >/dev/null 2>&1; then
        echo "go_build: no Go toolchain on PATH or in /usr/local/go/bin" >&2
        return 1
    fi
    mkdir -p "$(dirname "$root/$out")"
    (cd "$root/$module" && go build -trimpath -o "$root/$out" .) >&2
    echo "$root/$out"
}
