import type { HandlerReply } from 'retrysafe';
import { type CartItem, catalogue, type DeliveryOption, deliveryOptions } from '../data/catalogue.js';
import { orderProblem } from '../infrastructure/problem.js';

/** A validated value, or the problem to answer instead. */
export type Checked<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: HandlerReply };

export interface OrderRequest {
  readonly cart_id: string;
  readonly cart_version: number;
  readonly delivery_option: DeliveryOption;
  /** The cart's items, put in the order's transaction (as `PUT /v1/carts/:cart_id` would) before it is ordered. */
  readonly items?: readonly CartItem[];
}

interface FieldError {
  readonly field: string;
  readonly detail: string;
}

const CART_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_ITEMS = 50;
const MAX_QTY = 100;
const MAX_VERSION = 2_147_483_647;

export function checkCartId(value: unknown, field = 'cart_id'): FieldError[] {
  return typeof value === 'string' && CART_ID.test(value)
    ? []
    : [{ field, detail: 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_" or "-".' }];
}

/** The items of `PUT /v1/carts/:cart_id`, sorted by SKU so equal contents compare equal. */
export function checkCartItems(body: unknown): Checked<readonly CartItem[]> {
  if (!isObject(body)) return bodyNotObject();
  const { items } = body;
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_ITEMS) {
    return failed([{ field: 'items', detail: `must be an array of 1 to ${MAX_ITEMS} items.` }]);
  }
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const checked: CartItem[] = [];
  for (const [index, item] of (items as unknown[]).entries()) {
    const at = `items[${index}]`;
    if (!isObject(item)) {
      errors.push({ field: at, detail: 'must be an object with "sku" and "qty".' });
      continue;
    }
    const { sku, qty } = item;
    if (typeof sku !== 'string' || !catalogue.has(sku))
      errors.push({ field: `${at}.sku`, detail: 'is not a SKU in the catalogue.' });
    else if (seen.has(sku))
      errors.push({ field: `${at}.sku`, detail: 'appears more than once; give one line per SKU.' });
    if (!Number.isInteger(qty) || (qty as number) < 1 || (qty as number) > MAX_QTY)
      errors.push({ field: `${at}.qty`, detail: `must be an integer from 1 to ${MAX_QTY}.` });
    if (typeof sku === 'string') seen.add(sku);
    checked.push({ sku: String(sku), qty: Number(qty) });
  }
  if (errors.length > 0) return failed(errors);
  return { ok: true, value: checked.sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0)) };
}

/** The body of `POST /v1/orders`. Other members are ignored, and so are not part of the fingerprint. */
export function checkOrderRequest(body: unknown): Checked<OrderRequest> {
  if (!isObject(body)) return bodyNotObject();
  const { cart_id, cart_version, delivery_option } = body;
  const items = body.items === undefined ? undefined : checkCartItems(body);
  if (items?.ok === false) return items;
  const errors = checkCartId(cart_id);
  if (!Number.isInteger(cart_version) || (cart_version as number) < 1 || (cart_version as number) > MAX_VERSION) {
    errors.push({ field: 'cart_version', detail: 'must be a positive integer.' });
  }
  if (!deliveryOptions.includes(delivery_option as DeliveryOption)) {
    errors.push({
      field: 'delivery_option',
      detail: `must be one of ${deliveryOptions.map((o) => `"${o}"`).join(', ')}.`,
    });
  }
  if (errors.length > 0) return failed(errors);
  return {
    ok: true,
    value: {
      cart_id: cart_id as string,
      cart_version: cart_version as number,
      delivery_option: delivery_option as DeliveryOption,
      ...(items === undefined ? {} : { items: items.value }),
    },
  };
}

export function failed(errors: readonly FieldError[]): { readonly ok: false; readonly problem: HandlerReply } {
  const detail = errors.map((e) => `${e.field} ${e.detail}`).join(' ');
  return { ok: false, problem: orderProblem('validation-failed', detail, { members: { errors } }) };
}

function bodyNotObject(): { readonly ok: false; readonly problem: HandlerReply } {
  return { ok: false, problem: orderProblem('body-invalid', 'The request body must be a JSON object.') };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
