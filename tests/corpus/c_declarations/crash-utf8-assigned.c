/* Construction, the control path, reads, aliases and a .c file's wrapper. */
static void take(struct outer *o)
{
	spin_lock_irq(&o->lock);
}

static void fill(struct outer *o, int n)
{
	o->n = n;
	INIT_LIST_HEAD(&o->list);
}

struct outer *make(int n)
{
	struct out‘ßÕo = kzalloc(sizeof(*o), GFP_KERNEL);

	fill(o, n);
	return o;
}

static int o_change(struct outer *o, struct nlattr *opt, struct netlink_ext_ack *extack)
{
	o->n = 2;
	return 0;
}

void __init boot(struct outer *o)
{
	o->in.x = 1;
}

void use(struct outer *o)
{
	unsigned long *p = &o->in.arr[1];

	take(o);
	*p += READ_ONCE(o->n);
	p[2] = o->in.x;
	__set_bit(1, &o->flags);
	if (!o->count++)
		lock_sock(o->sk);
	o->sk->sk_mark = 1;
	release_sock(o->sk);
}
