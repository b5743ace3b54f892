// Negative log-likelihood of the gold option, clipped so that a zero probability stays finite.

export const NLL_FLOOR = 1e-12;

export function negLogLikelihood(pGold: number): number {
  return -Math.log(Math.max(pGold, NLL_FLOOR));
}
