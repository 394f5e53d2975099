/**
 * Which slots of the in-memory index's sparse layout a metadata filter keeps, one byte a slot,
 * for the filters searches have used. The router filters every search by partition: reading each
 * candidate's document to check it (an object elsewhere in the heap per tool met) cost more than
 * the rest of a search at 100,000 tools (docs/routing.md), where a byte a slot is one read of a
 * compact array. A mask is built at the first search with its filter and kept up to date as slots
 * are added, so a later search adds nothing that grows with the tools.
 */
import type { Document } from "@langchain/core/documents";
import { type InMemoryFilter, type MetadataFilter, toPredicate } from "./vector-index-common.js";

/** Whether a search keeps a slot (a live one: dead slots are skipped before it is asked). */
export type RowFilter = (slot: number) => boolean;

/** Most filters whose masks are kept (the oldest is dropped past it). */
export const MAX_FILTER_MASKS = 16;

interface Mask {
  keep: (doc: Document) => boolean;
  bytes: Uint8Array;
  /** Slots the bytes describe. */
  slots: number;
}

/** The masks of one index's metadata filters (see the file's comment). */
export class FilterMasks {
  private readonly masks = new Map<string, Mask>();

  /**
   * How a search applies `filter` to slots: a mask for a metadata filter, the function itself on
   * the slot's document for a function filter; undefined when the filter keeps everything.
   */
  rowFilter(filter: InMemoryFilter | undefined, docs: ReadonlyArray<Document | undefined>): RowFilter | undefined {
    const keep = toPredicate(filter);
    if (keep === undefined) return undefined;
    if (typeof filter === "function") return (slot) => keep(docs[slot]!);
    const key = keyOf(filter as MetadataFilter);
    let mask = this.masks.get(key);
    if (mask === undefined) {
      if (this.masks.size >= MAX_FILTER_MASKS) this.masks.delete(this.masks.keys().next().value!);
      mask = { keep, bytes: new Uint8Array(Math.max(64, docs.length)), slots: 0 };
      this.masks.set(key, mask);
    }
    for (let slot = mask.slots; slot < docs.length; slot++) this.set(mask, slot, docs[slot]);
    const bytes = mask.bytes;
    return (slot) => bytes[slot] === 1;
  }

  /** A slot was appended with this document. */
  added(slot: number, doc: Document): void {
    for (const mask of this.masks.values()) if (mask.slots === slot) this.set(mask, slot, doc);
  }

  /** Slots were renumbered or dropped: every mask is built again at its next search. */
  clear(): void {
    this.masks.clear();
  }

  private set(mask: Mask, slot: number, doc: Document | undefined): void {
    if (slot >= mask.bytes.length) {
      const grown = new Uint8Array(Math.max(slot + 1, 2 * mask.bytes.length));
      grown.set(mask.bytes);
      mask.bytes = grown;
    }
    mask.bytes[slot] = doc !== undefined && mask.keep(doc) ? 1 : 0;
    mask.slots = slot + 1;
  }
}

/** The same key for equal metadata filters, whatever the order of their keys. */
function keyOf(filter: MetadataFilter): string {
  return JSON.stringify(
    Object.keys(filter)
      .sort()
      .map((key) => [key, filter[key]]),
  );
}
