#!/usr/bin/env node
/**
 * The `agentq` command. stdout carries only each command's result; logs and progress go to stderr.
 * Exit 0 ok · 1 the run failed or was cancelled (or the command failed) · 2 usage error.
 * Heavy modules load lazily so a one-shot command starts fast.
 */
import { CommanderError } from 'commander';
import { EXIT, UsageError } from '../producer/cli/producer-commands.js';
import { AgentqError } from '../shared/contracts/errors.js';
import { createAgentqProgram, type CliIo } from './agentq-program.js';

const io: CliIo = {
  out: (text: string) => process.stdout.write(`${text}\n`),
  err: (text: string) => process.stderr.write(`${text}\n`),
  setExitCode: (code: number) => {
    process.exitCode = code;
  },
};

/** How long a failed command's process may take to let go of what it holds before it is ended. */
const FAILED_EXIT_MS = 2000;

const program = await createAgentqProgram(io);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here with exit code 0.
    process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else if (error instanceof UsageError || (error instanceof Error && error.name === 'InvalidArgumentError')) {
    io.err(`agentq: ${error.message}`);
    process.exitCode = EXIT.usage;
  } else {
    const message = AgentqError.isInstance(error)
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
    io.err(`agentq: ${message}`);
    process.exitCode = EXIT.runFailed;
  }
  // The command has failed and said why. Whatever it could not let go of (a connection still
  // reconnecting, a thread, a server) must not keep the process alive: it ends shortly whatever is left.
  setTimeout(() => process.exit(process.exitCode ?? EXIT.runFailed), FAILED_EXIT_MS).unref();
}
