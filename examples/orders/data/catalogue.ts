/** The products the service sells, priced on the server in cents: clients never send prices. */
export const catalogue: ReadonlyMap<string, number> = new Map([
  ['WIDGET-1', 1299],
  ['GADGET-2', 4999],
  ['GIZMO-3', 250],
]);

export const deliveryOptions = ['standard', 'express'] as const;
export type DeliveryOption = (typeof deliveryOptions)[number];

const deliveryFeeCents: Readonly<Record<DeliveryOption, number>> = { standard: 0, express: 1500 };

export interface CartItem {
  readonly sku: string;
  readonly qty: number;
}

export interface PricedLine extends CartItem {
  readonly unit_price_cents: number;
}

export type Pricing =
  | { readonly priced: true; readonly lines: readonly PricedLine[]; readonly totalCents: number }
  /** A SKU left the catalogue after it was put in the cart. */
  | { readonly priced: false; readonly sku: string };

export function priceCart(items: readonly CartItem[], delivery: DeliveryOption): Pricing {
  const lines: PricedLine[] = [];
  for (const item of items) {
    const price = catalogue.get(item.sku);
    if (price === undefined) return { priced: false, sku: item.sku };
    lines.push({ ...item, unit_price_cents: price });
  }
  const subtotal = lines.reduce((sum, line) => sum + line.qty * line.unit_price_cents, 0);
  return { priced: true, lines, totalCents: subtotal + deliveryFeeCents[delivery] };
}
