struct inner { int lock; int n; };
struct outer { struct inner in; int m; };
void outer_lock(struct outer *o)
{
	spin_lock(&o->in.lock);
}
void outer_unlock(struct outer *o)
{
	spin_unlock(&o->in.lock);
}
static void own_lock(struct outer *o)
{
	spin_lock(&o->in.lock);
}
#file
void bump(struct outer *o)
{
	outer_lock(o);
	o->m++;
	outer_unlock(o);
	outer_lock_bh(o);
	o->in.n = 1;
}
static void own_lock(struct outer *o)
{
}
#file
static inline void outer_lock_bh(struct outer *o)
{
	local_bh_disable();
	outer_lock(o);
}
