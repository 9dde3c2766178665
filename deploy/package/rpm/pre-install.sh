# msgx RPM %pre ($1: 1 install, 2+ upgrade): the msgx system user and group,
# before the files land (/etc/msgx/msgx.toml is root:msgx).
getent group msgx >/dev/null || groupadd --system msgx
getent passwd msgx >/dev/null || useradd --system --gid msgx --home-dir /var/lib/msgx \
    --no-create-home --shell /sbin/nologin --comment "msgx daemon" msgx
exit 0
