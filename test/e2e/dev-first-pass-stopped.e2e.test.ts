// The first pass after `up` was stopped: see first-pass-rounds.ts.
import { firstPassRounds } from './first-pass-rounds.ts';

firstPassRounds('stopped');
