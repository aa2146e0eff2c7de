struct inner { int a; };
struct outer { struct inner in; spinlock_t lock; int n __guarded_by(&lock); };
static void f(struct outer *o) __must_hold(&o->lock)
{
	WRITE_ONCE(o->in.a, 1);
	atomic_inc(&o->in.a);
}
