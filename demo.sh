#!/usr/bin/env bash
# The demo: Rust, Python, Node, C and Java workers contend for one lock on a local 3-member etcd
# cluster that this starts and stops, through a killed holder, a frozen holder, a leader
# failure and `etcdctl lock`; then a leader election (the leader SIGKILLed) and a semaphore with
# 3 permits on the same cluster; then a task queue (a worker SIGKILLed and one frozen mid-task).
# Installs/builds what is missing first. Options: --help.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
exec python3 demo/run.py "$@"
