package config

import "errors"

// Backup is the schedule of the backups serve takes of its data directory
// (docs/data.md); no schedule: none.
type Backup struct {
	Cron string // a cron expression (five fields) or a descriptor (@daily, @every 6h)
	Dir  string // where they go; default <data>/backups
	Keep int    // how many of the newest are kept
}

// backupSettings are --backup-cron, --backup-dir and --backup-keep. The
// cron expression is checked where it is parsed, when serve starts.
func backupSettings(c *Config) []setting {
	return []setting{
		{flag: "backup-cron", env: "BACKUP_CRON", usage: "take a backup of the data directory on this schedule (cron: \"0 3 * * *\", or @daily, @every 6h; SQLite only); empty: none", set: text(&c.Backup.Cron)},
		{flag: "backup-dir", env: "BACKUP_DIR", usage: "where scheduled backups go, one directory each; default <data>/backups", set: text(&c.Backup.Dir)},
		{flag: "backup-keep", env: "BACKUP_KEEP", def: "7", usage: "how many scheduled backups are kept (the oldest are removed)", set: whole(&c.Backup.Keep, 1)},
	}
}

// validateBackup checks the backup settings against the others.
func (c *Config) validateBackup() error {
	switch {
	case c.Backup.Cron != "" && c.DatabaseURL != "":
		return errors.New("backup-cron: scheduled backups are of SQLite data directories; back up PostgreSQL with pg_dump (docs/data.md)")
	case c.Backup.Cron != "" && c.Blob != nil:
		return errors.New("backup-cron: scheduled backups copy file contents from the data directory, and blob-url keeps them in a bucket; back up the bucket with the object store's own tools (docs/deploy.md#backups)")
	}
	return nil
}
