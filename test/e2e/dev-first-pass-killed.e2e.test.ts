// The first pass after `up` was killed: see first-pass-rounds.ts.
import { firstPassRounds } from './first-pass-rounds.ts';

firstPassRounds('killed');
