import { DEFAULT_ADMIN_ADDRESS, DEFAULT_METRICS_ADDRESS } from './args.ts';

export const MAIN_HELP = `switchboard — a gateway for AI traffic

Usage:
  switchboard run -f PATH [-f PATH…] [flags]   serve the objects in YAML files and folders
  switchboard validate -f PATH [-f PATH…]      check YAML files without serving them
  switchboard controller [flags]               Kubernetes mode: watch a cluster, serve proxies, write status
  switchboard proxy --controller URL --gateway NAME
                                               the data plane alone, configured by a controller
  switchboard crds                             print the CustomResourceDefinitions of switchboard.dev
  switchboard version                          print the version

Run "switchboard COMMAND --help" for the flags of a command.
`;

export const RUN_HELP = `Usage: switchboard run -f PATH [-f PATH…] [flags]

Serves the Gateway API and switchboard.dev objects found in PATH (a YAML file, or a folder searched
recursively for .yaml/.yml files). Files are watched: a change is applied within a moment, and a
file that fails to parse keeps serving what it declared before.

Flags:
  -f, --file PATH            YAML file or folder; repeatable
      --admin-address ADDR   admin endpoints /config_dump, /status, /healthz/ready (default ${DEFAULT_ADMIN_ADDRESS})
      --metrics-address ADDR Prometheus /metrics (default ${DEFAULT_METRICS_ADDRESS})
      --log-level LEVEL      fatal, error, warn, info, debug, trace or silent (default info,
                             or the filter's level)
      --log-filter FILTER    levels per module: LEVEL,MODULE=LEVEL,… (modules: source, mcp, llm,
                             forward; e.g. warn,source=debug; default $SWITCHBOARD_LOG_FILTER)
      --log-format FORMAT    text or json (default text; text is rendered only on a terminal, a pipe or file gets JSON)
      --workers N            proxy processes sharing the ports (default: one per CPU)
      --worker-stall-timeout S
                             with 2 or more workers, restart a worker whose event loop is stuck
                             this many seconds (default 10; 0 turns the watchdog off)
      --enable-proxy-models  serve ProxyModel objects (experimental, docs/models.md; otherwise
                             they are ignored and their status says the API is disabled)
  -h, --help                 show this help

ADDR is HOST:PORT, [IPv6]:PORT or :PORT. SIGINT or SIGTERM drains in-flight requests and exits 0.
`;

export const VALIDATE_HELP = `Usage: switchboard validate -f PATH [-f PATH…]

Reads the YAML files and folders like "run" would and reports every problem with its file,
document, object and field: YAML syntax, malformed objects, duplicates, and what the gateway would
reject (conditions Accepted=False or ResolvedRefs=False). A reference to an object that is not in
the files is a note, not an error. Exits 1 when there is an error, 0 otherwise.

Flags:
  -f, --file PATH            YAML file or folder; repeatable
      --show-defaults        print every switchboard.dev object with its defaults filled in
      --enable-proxy-models  validate ProxyModel objects (experimental; otherwise they are ignored)
  -h, --help                 show this help
`;

export const CRDS_HELP = `Usage: switchboard crds

Prints the CustomResourceDefinitions of the switchboard.dev kinds as multi-document YAML, the same
files as chart/crds/. Install them with server-side apply (kubectl apply --server-side -f -).
`;

export const VERSION_HELP = `Usage: switchboard version

Prints the switchboard version and the Node.js version running it.
`;
