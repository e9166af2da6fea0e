/** The root of the command tree: every command of devtool, in alphabetical order. */
import type { CommandSpec } from '../cli/spec.ts';
import { analyticsCommand } from './analytics/spec.ts';
import { buildCommand } from './build/spec.ts';
import { completionCommand } from './completion/spec.ts';
import { contextCommand } from './context/spec.ts';
import { deployCommand } from './deploy/spec.ts';
import { destroyCommand } from './destroy/spec.ts';
import { doctorCommand } from './doctor/spec.ts';
import { downCommand } from './down/spec.ts';
import { endpointsCommand } from './endpoints/spec.ts';
import { execCommand } from './exec/spec.ts';
import { helpCommand } from './help/spec.ts';
import { initCommand } from './init/spec.ts';
import { kubeconfigCommand } from './kubeconfig/spec.ts';
import { kubetokenCommand } from './kubetoken/spec.ts';
import { logsCommand } from './logs/spec.ts';
import { namespaceCommand } from './namespace/spec.ts';
import { pipelineCommand } from './pipeline/spec.ts';
import { previewCommand } from './preview/spec.ts';
import { restartCommand } from './restart/spec.ts';
import { statusCommand } from './status/spec.ts';
import { upCommand } from './up/spec.ts';
import { userCommand } from './user/spec.ts';
import { versionCommand } from './version/spec.ts';

export const rootCommand: CommandSpec = {
  name: 'devtool',
  summary: 'Live development environments on Kubernetes',
  subcommands: [
    analyticsCommand,
    buildCommand,
    completionCommand,
    contextCommand,
    deployCommand,
    destroyCommand,
    doctorCommand,
    downCommand,
    endpointsCommand,
    execCommand,
    helpCommand,
    initCommand,
    kubeconfigCommand,
    kubetokenCommand,
    logsCommand,
    namespaceCommand,
    pipelineCommand,
    previewCommand,
    restartCommand,
    statusCommand,
    upCommand,
    userCommand,
    versionCommand,
  ],
};
