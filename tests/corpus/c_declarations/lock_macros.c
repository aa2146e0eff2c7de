#define xa_lock_irq(xa)		spin_lock_irq(&(xa)->xa_lock)
#define xa_unlock_irq(xa)	spin_unlock_irq(&(xa)->xa_lock)
#define xas_lock_irq(xas)	xa_lock_irq((xas)->xa)
#define raw_spin_lock_irqsave_rcu_node(p, flags)			\
do {									\
	raw_spin_lock_irqsave(&ACCESS_PRIVATE(p, lock), flags);	\
	smp_mb__after_unlock_lock();					\
} while (0)
#define raw_spin_trylock_rcu_node(p)					\
({									\
	bool ___locked = raw_spin_trylock(&ACCESS_PRIVATE((p), lock));	\
	___locked;							\
})
#define half(x, ...) spin_lock(&(x)->
static void add(struct outer *o, struct inner *i, long nr)
{
	XA_STATE(xas, &o->in, 0);
	MA_STATE(mas, &i->tree, 0, 0);
	xas_lock_irq(&xas);
	o->n += nr;
	raw_spin_lock_irqsave_rcu_node(i, nr);
	i->m = 1;
}
