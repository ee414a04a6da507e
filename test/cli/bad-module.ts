/** A `--module` whose exports the commands must refuse. */
export const operations = 'payments.create@1';
