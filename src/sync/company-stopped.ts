/** Why a company's runs stop when an operator pauses or removes it: the runs' records say so. */
export class CompanyStopped extends Error {
  override readonly name = 'CompanyStopped';
}
