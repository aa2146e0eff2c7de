/* Member aliases, a .c file's wrappers of its own wrappers, and if/else. */
struct inner { spinlock_t lock; int x; };
struct outer { struct inner in; int y; };
#define o_lock	in.lock	/* the inner lock */
#define o_x in.x
#define o_x in.y
#define bad .x
#define seq(p) p.x

static inline void __outer_lock(struct outer *o, bool excl)
{
	if (excl)
		spin_lock(&o->o_lock);
	else
		spin_lock_bh(&o->o_lock);
}

static void outer_unlock(struct outer *o)
{
	spin_unlock(&o->o_lock);
}

static bool outer_lock(struct outer *o)
{
	__outer_lock(o, true);
	if (o->y) {
		outer_unlock(o);
		return false;
	}
	return true;
}

static inline bool outer_lock_excl(struct outer *o)
{
	return outer_lock(o);
}

void f(struct outer *o, int swap)
{
	if (!outer_lock_excl(o))
		return;
	o->o_x = 1;
	if (swap) {
		o->y = 2;
		outer_unlock(o);
	} else {
		o->in.x = 3;
		outer_unlock(o);
	}
	o->y = 4;
}
