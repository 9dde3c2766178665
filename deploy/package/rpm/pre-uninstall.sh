# msgx RPM %preun ($1: 0 erase, 1 upgrade): an erase stops and disables the
# units first; an upgrade leaves them to %post.
if [ "$1" -eq 0 ] && [ -d /run/systemd/system ]; then
    systemctl --no-reload disable --now msgx.service msgx-standby.service >/dev/null 2>&1 || :
fi
exit 0
