/* Lock wrappers as mmap_lock.h writes them, and their callers. */
struct inner { long a; };
struct outer { struct inner in; int lock; };
static inline void outer_lock(struct outer *o)
{
	down_write(&o->lock);
}
static inline bool outer_read_trylock(struct outer *o)
{
	return down_read_trylock(&o->lock) != 0;
}
static inline void outer_unlock(struct outer *o)
{
	up_write(&o->lock);
}
static inline void outer_lock_twice(int n, struct outer *o)
{
	outer_lock(o);
}
void set(struct outer *o, struct inner *p)
{
	outer_lock(o);
	rcu_assign_pointer(o->in.a, 1);
	outer_unlock(o);
	if (!outer_read_trylock(o))
		return;
	o->in.a++;
}
