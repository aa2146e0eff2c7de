/* Needless-store candidates for the fuzzer: constants, copies, tested
 * stores, exchange loops, set_mask_bits, bits, reached from entry points. */
static inline void use(struct outer *o, struct inner *i)
{
	WRITE_ONCE(o->bitmap, -1);
	if (READ_ONCE(o->in.flags) != -1UL)
		WRITE_ONCE(o->in.flags, -1UL);
	o->copy = i->napi_id;
	set_bit(BIT_A, &o->state);
	if (!test_bit(BIT_B, &o->state))
		set_bit(BIT_B, &o->state);
	set_mask_bits(&o->in.flags, MASK, 0);
}

static int update(struct outer *o, int gen)
{
	unsigned long new, old = READ_ONCE(o->in.flags);
	struct rmap_walk_control rwc = { .rmap_one = use, .arg = &gen };

	do {
		if (!(old & MASK)) {
			new = old | BIT(1);
			continue;
		}
		new = old & ~MASK;
		new |= (gen + 1UL) << SHIFT;
		helper(&new, gen);
		if (new == old)
			break;
	} while (!try_cmpxchg(&o->in.flags, &old, new));
	INDIRECT_CALL_2(o->fn, use, update, o, 1);
	return 0;
}

void __schedule(struct outer *o)
{
	unsigned long v = READ_ONCE(o->bitmap);

	if (v == ~0UL)
		return;
	o->bitmap = ~0UL;
	update(o, 1);
}
