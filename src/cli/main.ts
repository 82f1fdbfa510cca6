// First: the module compile cache must be on before the commands' modules load (compile-cache.js;
// bin/switchboard.js turns it on before this file is read).
import './compile-cache.js';
import { styleText } from 'node:util';
import { parseCrdsArgs, parseRunArgs, parseValidateArgs, parseVersionArgs, UsageError } from './args.ts';
import { versionText } from './commands/version.ts';
import { CRDS_HELP, MAIN_HELP, RUN_HELP, VALIDATE_HELP, VERSION_HELP } from './help.ts';

/** Exit codes: 0 ok, 1 the command failed (invalid config, could not start), 2 a usage mistake. */
async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run': {
        const options = parseRunArgs(rest);
        // Loaded on demand: the proxy is a lot of code that validate and version never need.
        return options === 'help' ? print(RUN_HELP) : await (await import('./commands/run.ts')).run(options);
      }
      case 'controller': {
        const { parseControllerArgs, CONTROLLER_HELP } = await import('./commands/controller-args.ts');
        const options = parseControllerArgs(rest);
        return options === 'help' ? print(CONTROLLER_HELP) : await (await import('./commands/controller.ts')).controller(options);
      }
      case 'validate': {
        const options = parseValidateArgs(rest);
        return options === 'help' ? print(VALIDATE_HELP) : await (await import('./commands/validate.ts')).validate(options);
      }
      case 'proxy':
        return await (await import('./commands/proxy.ts')).proxyCommand(rest);
      case 'crds':
        return parseCrdsArgs(rest) === 'help' ? print(CRDS_HELP) : print((await import('./crds.ts')).renderCrds());
      case 'version':
      case '--version':
        return parseVersionArgs(rest) === 'help' ? print(VERSION_HELP) : print(versionText());
      case 'help':
      case '--help':
      case '-h':
        return print(MAIN_HELP);
      case undefined:
        process.stderr.write(MAIN_HELP);
        return 2;
      default:
        throw new UsageError('', `unknown command "${command}"`);
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const hint = err.command ? `switchboard ${err.command} --help` : 'switchboard --help';
    process.stderr.write(`${styleText(['red', 'bold'], 'error:', { stream: process.stderr })} ${err.message}\nRun "${hint}" for usage.\n`);
    return 2;
  }
}

function print(text: string): number {
  process.stdout.write(text);
  return 0;
}

const code = await main(process.argv.slice(2));
// Exit explicitly: after a drain, idle keep-alive sockets or watchers must not hold the process open.
process.stdout.write('', () => process.exit(code));
