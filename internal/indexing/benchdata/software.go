package benchdata

import "strings"

// command is a page of the flowctl manual: what the command does, its
// options, and two facts users ask about, each with its questions.
type command struct {
	name, summary, usage string
	options              []string
	facts                [2]string
	questions            [2][]string
}

var commands = []command{
	{"init", "creates a flow.yaml file that describes a new pipeline in the current directory.", "flowctl init [--template NAME] [--force]",
		[]string{"--template NAME: start from a template (python, sql, node)", "--force: overwrite an existing flow.yaml"},
		[2]string{"Pass --template python, sql or node to start from one of the built-in templates instead of an empty pipeline.",
			"flowctl init refuses to overwrite an existing flow.yaml unless you add --force."},
		[2][]string{{"how to start a new pipeline from the python template", "flowctl init templates"}, {"flowctl init says flow.yaml already exists", "overwrite flow.yaml with init"}}},
	{"login", "signs you in to your workspace.", "flowctl login [--device]",
		[]string{"--device: sign in with a one-time code, for machines without a browser"},
		[2]string{"On a server without a browser, run flowctl login --device and enter the one-time code it prints on another device.",
			"Your credentials are stored in ~/.flowctl/credentials and expire after 30 days."},
		[2][]string{{"How do I log in on a headless server?", "flowctl login without browser"}, {"where are flowctl credentials stored", "how long does a flowctl login last"}}},
	{"deploy", "builds the pipeline and uploads it to an environment.", "flowctl deploy [--env NAME] [--timeout DURATION]",
		[]string{"--env NAME: the environment to deploy to (default: the current one)", "--timeout DURATION: give up after this long (default 15m)"},
		[2]string{"Deploy to another environment than the current one with flowctl deploy --env production.",
			"A deploy that takes longer than 15 minutes is cancelled; raise the limit with --timeout 30m."},
		[2][]string{{"How do I deploy to production?", "deploy to a different environment flowctl"}, {"my deploy gets cancelled after 15 minutes", "flowctl deploy timeout"}}},
	{"rollback", "returns an environment to an earlier release.", "flowctl rollback [--to RELEASE]",
		[]string{"--to RELEASE: the release number to go back to (see flowctl releases)"},
		[2]string{"Without options flowctl rollback goes back to the previous release; to go back further pass --to with a release number from flowctl releases.",
			"Rolling back does not revert database migrations; run the down migration yourself if you need to."},
		[2][]string{{"How do I roll back to a specific release?", "undo last deploy flowctl"}, {"does rollback undo database migrations", "rollback migrations"}}},
	{"status", "shows the state of each stage of the pipeline in the current environment.", "flowctl status [--watch]",
		[]string{"--watch: refresh the display every 2 seconds"},
		[2]string{"Add --watch to refresh the status display every 2 seconds until you press Ctrl-C.",
			"A stage shown as degraded has had at least one failed run in the last hour."},
		[2][]string{{"how to keep flowctl status updating", "flowctl status auto refresh"}, {"what does degraded mean in flowctl status", "stage degraded"}}},
	{"logs", "prints the logs of the pipeline's runs.", "flowctl logs [--follow] [--stage NAME] [--since DURATION]",
		[]string{"--follow: keep printing new lines as they arrive", "--stage NAME: only this stage", "--since DURATION: only lines newer than this (e.g. 2h)"},
		[2]string{"flowctl logs --follow streams new log lines as they arrive, like tail -f.",
			"Logs are kept for 7 days on the Free plan and for 30 days on the Team and Enterprise plans."},
		[2][]string{{"How can I tail the logs live?", "stream logs flowctl"}, {"How long are logs kept?", "log retention period"}}},
	{"backup", "takes a snapshot of the pipeline's state and data.", "flowctl backup create [--retain-days N]",
		[]string{"--retain-days N: keep the backup for N days (default 14, at most 365)"},
		[2]string{"flowctl backup create takes a consistent snapshot while the pipeline keeps running.",
			"Backups are kept for 14 days by default; keep them longer with --retain-days, up to 365 days."},
		[2][]string{{"Does taking a backup stop the pipeline?", "create a snapshot with flowctl"}, {"How do I keep backups for longer than two weeks?", "backup retention days", "my backups were deleted after two weeks"}}},
	{"restore", "replaces the pipeline's state with a backup.", "flowctl restore BACKUP_ID [--target-env NAME]",
		[]string{"--target-env NAME: restore into another environment (admin role required)"},
		[2]string{"The pipeline is paused while flowctl restore runs and resumes automatically when it finishes.",
			"Restoring a backup into another environment needs --target-env and the admin role."},
		[2][]string{{"Is the pipeline stopped during a restore?", "restore backup downtime"}, {"How do I restore a backup to a different environment?", "restore into staging from production backup"}}},
	{"scale", "sets the number of worker replicas.", "flowctl scale worker=N",
		[]string{"worker=N: the number of replicas"},
		[2]string{"flowctl scale worker=4 runs four worker replicas; scaling takes effect within a minute.",
			"The Free plan is limited to 2 workers; Team allows 20 and Enterprise has no limit."},
		[2][]string{{"How do I add more workers?", "scale up workers flowctl"}, {"How many workers can I have on the free plan?", "worker limit per plan"}}},
	{"secrets", "manages encrypted secrets available to the pipeline as environment variables.", "flowctl secrets set KEY=VALUE | list | unset KEY",
		[]string{"set KEY=VALUE: store a secret", "list: show the names of the secrets", "unset KEY: delete a secret"},
		[2]string{"flowctl secrets set API_KEY=... stores the value encrypted; the pipeline sees it as the environment variable API_KEY.",
			"Secret values cannot be read back: flowctl secrets list shows their names only."},
		[2][]string{{"How do I pass an API key to my pipeline securely?", "set environment variable secret flowctl"}, {"How can I see the value of a secret?", "secrets list shows no values"}}},
	{"config", "reads and changes the CLI's settings.", "flowctl config set KEY VALUE | get KEY",
		[]string{"set KEY VALUE: change a setting", "get KEY: print a setting"},
		[2]string{"Settings live in ~/.flowctl/config.toml; flowctl config set region eu-west makes new environments start in the EU.",
			"Set FLOWCTL_CONFIG to use another configuration file, for example one per project."},
		[2][]string{{"How do I change the default region?", "where is the flowctl config file"}, {"use a different config file per project", "FLOWCTL_CONFIG variable"}}},
	{"cache", "manages the local build cache.", "flowctl cache clear | size",
		[]string{"clear: delete the cache", "size: print how much space it uses"},
		[2]string{"flowctl cache clear deletes the local build cache in ~/.flowctl/cache, which can grow to several gigabytes.",
			"Clearing the cache makes the next build slower because every dependency is downloaded again."},
		[2][]string{{"flowctl is using a lot of disk space", "how to clear the build cache"}, {"Why is my build slow after clearing the cache?", "cache clear side effects"}}},
	{"migrate", "applies the pending database migrations of the pipeline.", "flowctl migrate [--dry-run]",
		[]string{"--dry-run: print the SQL without running it"},
		[2]string{"flowctl migrate applies pending migrations in order of their file names and stops at the first one that fails.",
			"Use flowctl migrate --dry-run to print the SQL that would run without changing the database."},
		[2][]string{{"In what order are migrations applied?", "migration failed halfway"}, {"How can I preview a migration?", "see the sql before migrating"}}},
	{"export", "writes the pipeline's output tables to files.", "flowctl export TABLE [--format csv|parquet] [--out DIR]",
		[]string{"--format csv|parquet: the file format (default csv)", "--out DIR: where to write"},
		[2]string{"Choose the file format with --format: csv (the default) or parquet.",
			"Exports larger than 5 GB are split into numbered parts of 5 GB each."},
		[2][]string{{"Can I export a table as parquet?", "export format options"}, {"why is my export split into several files", "large export parts"}}},
	{"import", "loads files into a table.", "flowctl import FILE --table NAME [--skip-errors]",
		[]string{"--table NAME: the table to load into (created when missing)", "--skip-errors: carry on past bad rows"},
		[2]string{"flowctl import reads CSV, JSON Lines and Parquet files and creates the table when it does not exist.",
			"With --skip-errors, rows that cannot be loaded are written to rejects.csv and the import carries on."},
		[2][]string{{"What file types can I import?", "import json lines file"}, {"import stops at a bad row", "where do rejected rows go"}}},
	{"schedule", "runs the pipeline on a schedule.", "flowctl schedule set CRON [--timezone TZ] | clear",
		[]string{"set CRON: run on this cron schedule", "--timezone TZ: interpret it in this time zone (default UTC)", "clear: remove the schedule"},
		[2]string{"flowctl schedule set \"0 3 * * *\" runs the pipeline every day at 03:00.",
			"Schedules are in UTC unless you pass --timezone, for example --timezone Europe/Berlin."},
		[2][]string{{"How do I run my pipeline every night?", "daily schedule cron flowctl"}, {"my schedule runs at the wrong hour", "schedule time zone"}}},
	{"users", "manages the members of the workspace.", "flowctl users add EMAIL [--role ROLE] | remove EMAIL | list",
		[]string{"add EMAIL: invite someone", "--role ROLE: viewer, editor or admin (default editor)", "remove EMAIL: remove a member"},
		[2]string{"flowctl users add ana@example.com --role viewer invites a user with read-only access.",
			"Invitations expire after 7 days; run flowctl users add again to send a new one."},
		[2][]string{{"How do I give someone read only access?", "add a viewer user"}, {"invitation link expired", "how long are invites valid"}}},
	{"tokens", "manages API tokens for automation.", "flowctl tokens create --name NAME [--no-expiry] | revoke ID",
		[]string{"create --name NAME: make a token", "--no-expiry: a token that never expires", "revoke ID: revoke a token"},
		[2]string{"flowctl tokens create --name ci prints a new API token once; store it right away, it cannot be shown again.",
			"API tokens expire after 90 days unless they are created with --no-expiry."},
		[2][]string{{"How do I create a token for my CI?", "api token for automation"}, {"When do API tokens expire?", "token stopped working after 3 months"}}},
	{"webhook", "sends HTTP requests when events happen.", "flowctl webhook add URL --event EVENT | list | remove ID",
		[]string{"add URL: the endpoint to call", "--event EVENT: run.failed, run.succeeded, deploy.finished"},
		[2]string{"flowctl webhook add https://example.com/hook --event run.failed sends a POST request each time a run fails.",
			"Webhook requests are signed with an X-Flow-Signature header, an HMAC-SHA256 of the body with the webhook's secret."},
		[2][]string{{"How can I get notified when a run fails?", "alert on failed runs"}, {"How do I verify a webhook signature?", "webhook hmac header"}}},
	{"plugin", "installs and removes plugins.", "flowctl plugin install NAME[@VERSION] | remove NAME | list",
		[]string{"install NAME[@VERSION]: install from the registry, optionally a given version"},
		[2]string{"Pin a plugin version with flowctl plugin install s3-sink@1.2.0; without a version the latest is installed.",
			"Plugins are installed into ~/.flowctl/plugins and shared by all projects."},
		[2][]string{{"How do I install a specific version of a plugin?", "pin plugin version"}, {"where are plugins installed", "plugin folder location"}}},
	{"env", "manages environments.", "flowctl env create NAME [--from NAME] | list | delete NAME",
		[]string{"create NAME: a new environment", "--from NAME: copy the variables and secrets of another environment"},
		[2]string{"flowctl env create staging --from production copies the variables and secrets of production into the new environment.",
			"A workspace can have up to 10 environments."},
		[2][]string{{"How do I copy production settings into a new staging environment?", "clone environment"}, {"How many environments can I create?", "environment limit"}}},
	{"run", "starts the pipeline once, outside its schedule.", "flowctl run [--stage NAME] [--param KEY=VALUE]",
		[]string{"--stage NAME: run this stage only", "--param KEY=VALUE: pass a parameter (repeatable)"},
		[2]string{"flowctl run --stage clean runs only the stage named clean, with the outputs of earlier stages as they are.",
			"Pass parameters to a run with --param date=2024-01-31; repeat it for several parameters."},
		[2][]string{{"Can I run just one stage?", "run a single stage"}, {"How do I pass parameters to a run?", "run with arguments"}}},
	{"upgrade", "updates the CLI itself.", "flowctl upgrade [--channel stable|beta]",
		[]string{"--channel stable|beta: the release channel (default stable)"},
		[2]string{"flowctl upgrade --channel beta installs preview releases; switch back with --channel stable.",
			"The CLI checks for a new version once a day; set FLOWCTL_NO_UPDATE_CHECK=1 to turn this off."},
		[2][]string{{"How do I try the beta version of the CLI?", "install preview release"}, {"How do I stop the update check?", "disable update notifications"}}},
	{"completion", "prints a shell completion script.", "flowctl completion bash|zsh|fish|powershell",
		[]string{"the shell: bash, zsh, fish or powershell"},
		[2]string{"Add source <(flowctl completion bash) to your ~/.bashrc to complete commands and flags with the Tab key.",
			"Completion scripts are available for bash, zsh, fish and PowerShell."},
		[2][]string{{"How do I enable tab completion?", "bash autocomplete for flowctl"}, {"Does completion work in fish?", "which shells are supported for completion"}}},
}

// troubles are the troubleshooting pages: code, title, cause, fix, questions.
var troubles = []struct {
	code, title, cause, fix string
	questions               []string
}{
	{"E1001", "Authentication failed", "Your session has expired or the token was revoked.", "Run flowctl login again, or create a new token.",
		[]string{"flowctl says authentication failed", "error E1001", "I keep getting logged out"}},
	{"E1042", "Connection refused", "The agent cannot reach the server on port 7443.", "Open port 7443 in your firewall, or set server.port in flow.yaml to the port your proxy uses.",
		[]string{"connection refused when deploying", "E1042 error fix", "agent cannot connect to server"}},
	{"E1107", "Quota exceeded", "The workspace has used all of its run minutes for this month.", "Wait until the minutes reset on the first day of the month, or upgrade your plan.",
		[]string{"quota exceeded error", "ran out of run minutes", "when do run minutes reset"}},
	{"E1203", "Checksum mismatch", "A cached build artifact is corrupt.", "Run flowctl cache clear and build again.",
		[]string{"build fails with checksum mismatch", "E1203", "corrupt cache error"}},
	{"E1300", "Schema drift", "The target table has columns the pipeline does not know about.", "Run flowctl migrate, or deploy with --allow-drift to ignore the extra columns.",
		[]string{"schema drift error", "table has extra columns deploy fails"}},
	{"E1404", "Stage not found", "The stage named in --stage does not exist in flow.yaml.", "Check the spelling: stage names are case-sensitive.",
		[]string{"stage not found but it exists", "E1404 stage name"}},
	{"E1500", "Worker out of memory", "A stage used more than its memory limit, 2 GB unless configured.", "Raise resources.memory for the stage in flow.yaml, for example to 4Gi.",
		[]string{"stage keeps running out of memory", "increase memory limit of a stage", "OOM error E1500"}},
	{"E1502", "Stage timeout", "A stage ran longer than its timeout, one hour unless configured.", "Set timeout in the stage definition, for example timeout: 3h.",
		[]string{"stage killed after one hour", "increase stage timeout"}},
	{"E1610", "Certificate not trusted", "The server's TLS certificate is signed by an authority your machine does not trust, often a company proxy.", "Add your company's CA with flowctl config set ca-file /path/to/ca.pem.",
		[]string{"certificate error behind corporate proxy", "tls certificate not trusted", "x509 unknown authority flowctl"}},
	{"E1720", "Rate limited", "More than 600 API requests per minute were made with one token.", "The CLI waits and retries on its own; spread scripted calls over several tokens if it happens often.",
		[]string{"too many requests error", "what is the api rate limit", "rate limited E1720"}},
	{"E1801", "Secret not found", "The pipeline refers to a secret that is not set in this environment.", "Set it with flowctl secrets set in the environment you deploy to.",
		[]string{"secret not found in production", "E1801 missing secret"}},
	{"E1905", "Deploy lock held", "Another deploy is running in this environment.", "Wait for it to finish, or run flowctl unlock if the other deploy crashed.",
		[]string{"deploy lock held error", "another deploy is running but it crashed", "how to unlock deploys"}},
	{"E2001", "Agent disk full", "The agent's work directory has less than 1 GB free.", "Delete old run directories with flowctl gc --older-than 7d.",
		[]string{"agent disk is full", "clean up old runs on the agent", "no space left on device flowctl"}},
	{"E2100", "Incompatible plugin", "The plugin needs a newer version of the CLI.", "Run flowctl upgrade, then install the plugin again.",
		[]string{"plugin incompatible with cli version", "E2100"}},
	{"E2210", "Invalid cron expression", "Schedules need five fields: minute, hour, day of month, month and day of week.", "Check the expression, for example \"30 6 * * 1\" for Mondays at 06:30.",
		[]string{"invalid cron expression", "how to write a schedule for every monday"}},
	{"E2300", "Permission denied", "Your role does not allow this action; viewers cannot deploy or change settings.", "Ask a workspace admin to give you the editor role.",
		[]string{"permission denied when deploying", "viewer cannot deploy", "E2300 permission"}},
}

// software writes the flowctl manual (Markdown): 24 command pages and 16
// troubleshooting pages.
func (g *gen) software() {
	const coll = "software"
	for _, c := range commands {
		var b strings.Builder
		w := func(format string, args ...any) { b.WriteString(sprintf(format, args...)) }
		w("# flowctl %s\n\n`flowctl %s` %s\n\n## Usage\n\n```\n%s\n```\n\n## Options\n\n", c.name, c.name, c.summary, c.usage)
		for _, o := range c.options {
			w("- %s\n", o)
		}
		w("\n## Examples\n\n%s\n\n## Notes\n\n%s\n\nSee also: `flowctl help %s`.\n", c.facts[0], c.facts[1], c.name)
		g.fact(coll, c.facts[0], c.questions[0]...)
		g.fact(coll, c.facts[1], c.questions[1]...)
		g.doc(coll, "manual/commands/"+c.name+".md", "text/markdown", b.String())
	}
	for _, t := range troubles {
		page := sprintf("# Troubleshooting %s\n\n## %s (%s)\n\nflowctl stops with error %s: %s.\n\nCause: %s\n\nFix: %s\n\n## Still failing?\n\nRun the command again with --verbose and send the output to support.\n",
			t.code, t.title, t.code, t.code, strings.ToLower(t.title), t.cause, t.fix)
		g.fact(coll, t.fix, t.questions...)
		g.doc(coll, "manual/errors/"+strings.ToLower(t.code)+".md", "text/markdown", page)
	}
}
