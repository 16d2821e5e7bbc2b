#!/bin/bash
#
# Greenboot required check of kindnet and kube-proxy, the pod network of
# microshift-io's build, which MicroShift's own check does not wait for: a
# boot where their DaemonSets are not ready in time is red. Installed by
# microshift-compose's kindnet component.
#
set -eu -o pipefail

SCRIPT_NAME=$(basename "$0")

# The MicroShift health check functions library (microshift-greenboot)
# shellcheck source=/dev/null
source /usr/share/microshift/functions/greenboot.sh

if [ "$(id -u)" -ne 0 ] ; then
    echo "The '${SCRIPT_NAME}' script must be run with the 'root' user privileges"
    exit 1
fi

# Exit if MicroShift's own check failed
exit_if_fail_marker_exists

echo "STARTED"
print_boot_status

WAIT_TIMEOUT_SECS=$(get_wait_timeout)

if ! microshift healthcheck -v=2 --timeout="${WAIT_TIMEOUT_SECS}s" \
        --custom '{"kube-kindnet":{"daemonsets":["kube-kindnet-ds"]},"kube-proxy":{"daemonsets":["kube-proxy"]}}' ; then
    create_fail_marker_and_exit
fi

echo "FINISHED"
