# msgx RPM %post ($1: 1 install, 2+ upgrade). As the Debian postinst: the state
# and log directories, /etc/msgx's mode, the env file once from its template.
# A fresh install starts nothing (the operator fills /etc/msgx/msgx.env and
# runs `msgx doctor` first). An upgrade restarts running units only when
# `msgx migrate --check` passes with the new binary (the daemon refuses an
# older schema and one migrated by a newer msgx).
install -d -m 0750 -o msgx -g msgx /var/lib/msgx /var/log/msgx
chown root:msgx /etc/msgx
chmod 0750 /etc/msgx
if [ ! -e /etc/msgx/msgx.env ]; then
    install -m 0640 -o root -g msgx /usr/share/msgx/msgx.env /etc/msgx/msgx.env
fi
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || :
    if [ "$1" -ge 2 ]; then
        if verdict=$(runuser -u msgx -- sh -c 'set -a; . /etc/msgx/msgx.env; set +a; MSGX_CONFIG=/etc/msgx/msgx.toml exec /usr/bin/msgx migrate --check' 2>&1); then
            systemctl try-restart msgx.service msgx-standby.service >/dev/null 2>&1 || :
        else
            echo "msgx: not restarting the msgx units (a running one keeps the previous binary): \`msgx migrate --check\` fails with this one:" >&2
            echo "msgx:   $verdict" >&2
            echo "msgx: as user msgx, run \`msgx migrate\`, then systemctl restart msgx" >&2
        fi
    fi
fi
exit 0
