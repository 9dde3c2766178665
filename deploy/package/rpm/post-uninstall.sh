# msgx RPM %postun ($1: 0 erase, 1 upgrade). RPM has no purge: an erase keeps
# what the operator or the daemon made (the filled /etc/msgx/msgx.env,
# /var/lib/msgx, the logs in /var/log/msgx) and the msgx user, as Fedora's
# packaging guidelines keep users; docs/operations.md lists what to remove by
# hand.
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || :
fi
exit 0
