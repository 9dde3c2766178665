-- The shared mailbox tables exactly as the predecessor defines them
-- (sis-format §1.6, §5; issues 2 and 16): lower-case table names, as its DDL
-- and its code (`cminmsgs`, `coutmsgs`) spell them. MySQL/MariaDB compare
-- table names case-sensitively on Linux; msgx resolves the configured names
-- case-insensitively (src/store/mailbox/schema.rs). For development and tests
-- only: msgx never creates or alters mailbox tables in production.
CREATE TABLE IF NOT EXISTS `cminmsgs` (
    `CMINMSGS_ID`               BIGINT NOT NULL AUTO_INCREMENT,
    `CMINMSGS_CLOB_MSG`         MEDIUMTEXT NOT NULL,
    `CMINMSGS_DATE_RECEIVED`    DATETIME,
    `CMINMSGS_DATE_PROCESSED`   DATETIME,
    `CMINMSGS_SUBSYSTEM_NAME`   VARCHAR(4),
    `CMINMSGS_SUBSYSTEM_SEQUENCE` MEDIUMINT,
    `CMINMSGS_SUBSYSTEM_DATE_SENT` DATETIME,
    `CMINMSGS_SUBSYSTEM_SUBTYPE` VARCHAR(4),
    `CMINMSGS_SUBSYSTEM_TYPE`   VARCHAR(4),
    `CMINMSGS_STATUS`           VARCHAR(20),
    PRIMARY KEY (`CMINMSGS_ID`)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS `coutmsgs` (
    `COUTMSGS_ID`               BIGINT NOT NULL AUTO_INCREMENT,
    `COUTMSGS_CLOB_MSG`         MEDIUMTEXT,
    `COUTMSGS_DATE_INSERTED`    DATETIME NOT NULL,
    `COUTMSGS_DATE_SENT`        DATETIME,
    `ROUTINGID`                 VARCHAR(23) NOT NULL,
    `COUTMSGS_TRUEFALS_GROUP`   TINYINT NOT NULL DEFAULT 0,
    `COUTMSGS_NO_MESSAGES`      TINYINT,
    `COUTMSGS_GROUP_ORDER`      TINYINT,
    `COUTMSGS_GROUP_ID`         SMALLINT,
    `COUTMSGS_FINAL_GROUP_IND`  TINYINT NOT NULL DEFAULT 0,
    `COUTMSGS_ACK_REQD`         TINYINT NOT NULL DEFAULT 0,
    `COUTMSGS_ACK_RESEND_TIMES` TINYINT NOT NULL DEFAULT 0,
    `COUTMSGS_ACK_DATE_RECV`    DATETIME,
    `COUTMSGS_ENCRYPT`          TINYINT NOT NULL DEFAULT 0,
    `COUTMSGS_ERROR`            TINYINT NOT NULL DEFAULT 0,
    PRIMARY KEY (`COUTMSGS_ID`)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
